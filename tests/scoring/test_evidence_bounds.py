"""Every number that enters scoring is bounded in one place (questionnaires.bounds), whatever its
source: answers, startup-log figures, config.json figures, probe figures.

At its bound every source scores (the rules' 64-bit arithmetic cannot overflow); one above, an
evidence file is kept as evidence, marked "not parsed: value out of range" with the value, and
scoring goes on without it. The answers' own bounds are pinned in test_contract_conformance.
"""

import datetime as dt
import json
from pathlib import Path

import pytest

from questionnaires.bounds import EVIDENCE_MAXIMUM, integer_maximum
from scoring.evidence import describe_parse_result, parse_evidence, stored_parse_result
from scoring.registry import builtin_catalog
from tests.scoring.test_rules_table import BASELINE as V1_BASELINE
from tests.scoring.test_rules_table import answers_with, sglang_log
from tests.scoring.test_rules_v2_table import BASELINE as V2_BASELINE

AS_OF = dt.date(2026, 12, 1)
CONTEXT = 1_048_576


@pytest.fixture(scope="module")
def catalog():
    return builtin_catalog()


def score(catalog, questionnaire, ruleset, answers, evidence):
    from questionnaires.validation import validate_answers

    clean = validate_answers(catalog.questionnaire(questionnaire), answers)
    return catalog.compiled(ruleset).score(clean.values, as_of=AS_OF, evidence=evidence)


def log_result(directory: Path, pool: int, context: int):
    path = sglang_log(directory, "prefill.log", pool, context)
    return parse_evidence(path, parser="startup_log", source_name=path.name)


def model_result(values_per_token: int):
    # MHA without head_dim: values/token = 2 x layers x heads x (hidden / heads) = 2 x layers x hidden
    document = {"num_hidden_layers": 1, "num_attention_heads": 1, "hidden_size": 1}
    document["hidden_size"] = values_per_token // 2
    return parse_evidence(json.dumps(document).encode(), parser="model_config")


def probe_result(declared_context: int):
    document = {
        "endpoint": "https://api.example.com",
        "model": "example/model-1",
        "declared_context": declared_context,
        "checks": {"canary": {"result": "leak"}},
    }
    return parse_evidence(json.dumps(document).encode(), parser="probe_result")


def assert_out_of_range(result, value: int) -> None:
    assert not result.parsed
    assert result.reason["id"] == "value_out_of_range"
    assert result.reason["params"]["value"] == value
    text = describe_parse_result(result.to_dict(), str)
    assert text.startswith("not parsed: value out of range")
    assert f"{value:,}" in text


# -- the reproduction ---------------------------------------------------------------------------


def test_a_log_with_a_pool_of_two_to_the_63_minus_one_is_kept_unparsed_and_scoring_goes_on(
    catalog, tmp_path
):
    """Issue 28, break 1: this log made every scoring run fail with "rule
    LOG-DECLARED-MISMATCH failed: Arithmetic overflow in 'mul'", until the file was removed."""
    result = log_result(tmp_path, 9223372036854775807, CONTEXT)

    assert_out_of_range(result, 9223372036854775807)
    scored = score(
        catalog,
        "ai-inference-isolation@1",
        "incident-2026-kv@1",
        dict(V1_BASELINE),
        {"CTX-08": [result]},
    )
    assert "LOG-DECLARED-MISMATCH" not in scored.fired_rule_ids
    assert scored.evidence["CTX-08"][0]["parsed"] is False  # kept, not lost


@pytest.mark.parametrize("value", [2**63, 10**29])
def test_larger_pools_are_out_of_range_too(tmp_path, value):
    assert_out_of_range(log_result(tmp_path, value, CONTEXT), value)


def test_a_stored_result_from_before_the_bound_is_read_back_out_of_range(tmp_path):
    """A result stored parsed before the bound existed is checked when scoring reads it back
    ("Score again" used to fail the same way)."""
    stored = {
        "kind": "startup_log",
        "source_name": "old.log",
        "parsed": True,
        "engine": "sglang",
        "instances": [
            {
                "engine": "sglang",
                "role": None,
                "pool_tokens": 10**29,
                "pool_line": 2,
                "pool_text": "max_total_num_tokens=" + str(10**29),
                "context_tokens": CONTEXT,
                "context_line": 2,
                "context_text": "context_len=1048576",
                "failed_start": False,
                "rejections": 0,
            }
        ],
    }
    assert_out_of_range(stored_parse_result(stored), 10**29)


# -- every source at its bound scores; one above is out of range -----------------------------------


def test_logs_at_the_bound_score(catalog, tmp_path):
    maximum = EVIDENCE_MAXIMUM["tokens"]
    for pool, context in ((maximum, CONTEXT), (0, maximum), (maximum, maximum)):
        result = log_result(tmp_path, pool, context)
        assert result.parsed and (result.pool, result.context) == (pool, context)
        for questionnaire, ruleset, baseline in (
            ("ai-inference-isolation@1", "incident-2026-kv@1", V1_BASELINE),
            ("ai-inference-isolation@2", "incident-2026-kv@2", V2_BASELINE),
        ):
            answers = answers_with(
                {"CTX-01": integer_maximum("CTX-01"), "CTX-02": integer_maximum("CTX-02")},
                baseline,
            )
            scored = score(catalog, questionnaire, ruleset, answers, {"CTX-08": [result]})
            assert scored.risk_score is not None


@pytest.mark.parametrize("figure", ["pool", "context"])
def test_a_log_figure_one_above_the_bound_is_out_of_range(tmp_path, figure):
    above = EVIDENCE_MAXIMUM["tokens"] + 1
    pool, context = (above, CONTEXT) if figure == "pool" else (CONTEXT, above)
    assert_out_of_range(log_result(tmp_path, pool, context), above)


def test_the_model_file_at_the_bound_scores_with_logs_and_answers_at_theirs(catalog, tmp_path):
    """The largest product the rules compute: KV bytes per token (2 x values) x a log's tokens."""
    model = model_result(EVIDENCE_MAXIMUM["values_per_token"])
    assert model.parsed and model.sizing.values_per_token == EVIDENCE_MAXIMUM["values_per_token"]
    log = log_result(tmp_path, EVIDENCE_MAXIMUM["tokens"], EVIDENCE_MAXIMUM["tokens"])
    answers = answers_with(
        {
            "PRF-11": "bf16",
            "PRF-12": integer_maximum("PRF-12"),
            "PRF-13": integer_maximum("PRF-13"),
            "CTX-01": integer_maximum("CTX-01"),
            "CTX-02": integer_maximum("CTX-02"),
        },
        V2_BASELINE,
    )
    scored = score(
        catalog,
        "ai-inference-isolation@2",
        "incident-2026-kv@2",
        answers,
        {"PRF-10": [model], "CTX-08": [log]},
    )
    assert scored.risk_score is not None


def test_a_model_file_one_above_the_bound_is_out_of_range():
    above = EVIDENCE_MAXIMUM["values_per_token"] + 2  # values per token are even for MHA
    assert_out_of_range(model_result(above), above)


def test_a_probe_result_at_the_bound_scores_and_one_above_is_out_of_range(catalog):
    at = probe_result(EVIDENCE_MAXIMUM["tokens"])
    assert at.parsed
    scored = score(
        catalog,
        "ai-inference-isolation@2",
        "incident-2026-kv@2",
        dict(V2_BASELINE),
        {"PRB-02": [at]},
    )
    assert "PROBE-CROSS-TENANT-ECHO" in scored.fired_rule_ids

    above = probe_result(EVIDENCE_MAXIMUM["tokens"] + 1)
    assert_out_of_range(above, EVIDENCE_MAXIMUM["tokens"] + 1)
    scored = score(
        catalog,
        "ai-inference-isolation@2",
        "incident-2026-kv@2",
        dict(V2_BASELINE),
        {"PRB-02": [above]},
    )
    assert "PROBE-CROSS-TENANT-ECHO" not in scored.fired_rule_ids
