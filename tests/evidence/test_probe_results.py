"""The isolation probe's result (PRB-02 evidence): the JSON of probe.md, checked and reduced to
the outcome of each check; anything else is kept and marked "not parsed"."""

import io
import json
from pathlib import Path

import pytest

from scoring.evidence import describe_parse_result, parse_evidence, stored_parse_result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def parse(document) -> object:
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    return parse_evidence(io.BytesIO(data), parser="probe_result", source_name="probe.json")


def valid() -> dict:
    return json.loads((EXAMPLES / "probe-launch-day.json").read_text(encoding="utf-8"))


def test_the_example_result_of_probe_md_is_read():
    result = parse(valid())

    assert result.parsed is True
    assert (result.endpoint, result.model, result.declared_context) == (
        "https://api.example.com", "glm-5.3", 1_048_576,
    )  # fmt: skip
    assert dict(result.checks) == {
        "oversize": "accepted", "canary": "leak", "prefix_cache": "no_cache_seen",
    }  # fmt: skip
    assert result.probe["checks"]["canary"]["hits"][0]["response"] == "B2"
    assert describe_parse_result(result.to_dict(), str) == (
        "Isolation probe of https://api.example.com: oversized prompts accepted,"
        " cross-tenant echo leak, prefix cache no cache seen"
    )


def test_a_probe_that_ran_only_some_checks_is_read():
    document = valid()
    del document["checks"]["canary"], document["checks"]["prefix_cache"]

    result = parse(document)

    assert (result.parsed, dict(result.checks)) == (True, {"oversize": "accepted"})
    assert "cross-tenant echo not run" in describe_parse_result(result.to_dict(), str)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("endpoint"), "'endpoint' must be a non-empty string"),
        (lambda d: d.update(declared_context="1M"), "'declared_context' must be a positive"),
        (lambda d: d.update(checks={}), "'checks' must be an object with at least one check"),
        (lambda d: d["checks"].update(latency={"result": "ok"}), "unknown check 'latency'"),
        (lambda d: d["checks"]["canary"].update(result="maybe"), "'checks.canary.result' must be"),
        (lambda d: d["checks"].update(oversize="accepted"), "'checks.oversize.result' must be"),
    ],
)
def test_a_json_file_that_is_not_a_probe_result_says_what_is_wrong(change, problem):
    document = valid()
    change(document)

    result = parse(document)

    assert result.parsed is False
    assert result.reason["id"] == "not_a_probe_result"
    assert problem in result.reason["params"]["problem"]
    assert describe_parse_result(result.to_dict(), str).startswith(
        "not parsed: not an isolation probe result: "
    )


@pytest.mark.parametrize(("data", "reason"), [(b"", "empty_file"), (b"<html>", "not_json")])
def test_an_unreadable_file_is_not_parsed(data, reason):
    assert parse(data).reason["id"] == reason


def test_a_stored_result_comes_back_as_a_probe_result():
    result = parse(valid())

    assert stored_parse_result(json.loads(json.dumps(result.to_dict()))) == result
