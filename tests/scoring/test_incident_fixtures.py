"""The incident vendor (Cloudflare disclosure, 2026-10-26) at launch and after remediation.

Scores `examples/incident-2026-launch.json` and `examples/incident-2026-remediated.json` in
process and through `manage.py score` (api.md), with and without the engine's startup log as
CTX-08 evidence. Expected scores are computed from the ruleset's own points, never hard-coded.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from questionnaires.validation import (
    AnswerValidationError,
    hidden_codes,
    missing_required,
    validate_answers,
)
from scoring.evidence import parse_startup_log
from scoring.registry import builtin_catalog

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LOGS = ROOT / "tests" / "fixtures" / "logs"
LAUNCH = EXAMPLES / "incident-2026-launch.json"
REMEDIATED = EXAMPLES / "incident-2026-remediated.json"
LAUNCH_LOG = LOGS / "sglang-prefill-glm53-launch.log"
REMEDIATED_LOG = LOGS / "sglang-prefill-glm53-remediated.log"
DECODE_LOG = LOGS / "sglang-decode-glm53-launch.log"
QUESTIONNAIRE = "ai-inference-isolation@1"
RULESET = "incident-2026-kv@1"
AS_OF = dt.date(2026, 12, 1)
SECTIONS = {"PRF", "CTX", "KV", "ISO", "CHG", "INC", "GOV", "USE"}
INCIDENT_POOL, INCIDENT_CONTEXT = 681_280, 1_048_576


@pytest.fixture(scope="module")
def catalog():
    return builtin_catalog()


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def score_file(questionnaire, engine, path: Path, *logs: Path):
    document = load(path)
    clean = validate_answers(questionnaire, document["answers"], document.get("comments"))
    parsed = [parse_startup_log(log, source_name=log.name) for log in logs]
    return engine.score(clean.values, as_of=AS_OF, evidence={"CTX-08": parsed} if logs else None)


def expected_score(ruleset, rule_ids) -> int:
    severities = {rule.id: rule.severity for rule in ruleset.rules}
    return min(100, sum(ruleset.points[severities[rule_id]] for rule_id in rule_ids))


def line_number_of(path: Path, *needles: str) -> int:
    """1-based number of the first line holding the first needle found (needles in order of
    preference)."""
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    for needle in needles:
        for number, line in enumerate(lines, start=1):
            if needle in line:
                return number
    raise AssertionError(f"{path.name} holds none of {needles}")


# -- the answer files ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [LAUNCH, REMEDIATED], ids=["launch", "remediated"])
def test_example_is_complete_and_valid(path, questionnaire):
    document = load(path)
    assert document["questionnaire"] == "ai-inference-isolation"
    assert str(document["version"]) == "1"
    clean = validate_answers(questionnaire, document["answers"], document.get("comments"))
    assert missing_required(questionnaire, clean.values) == []
    assert not hidden_codes(questionnaire, clean.values) & set(document["answers"]), (
        "an answer file should not answer questions its own answers hide"
    )
    assert clean.comments, "the examples explain some answers"
    assert {code.split("-")[0] for code in document["answers"]} == SECTIONS


def test_examples_are_faithful_to_the_incident():
    launch, remediated = load(LAUNCH)["answers"], load(REMEDIATED)["answers"]
    for answers in (launch, remediated):
        assert answers["PRF-01"] == "Workers AI"
        assert answers["PRF-02"] == "@cf/zai-org/glm-5.3"
        assert answers["PRF-03"] == "shared_multi_tenant"
        assert (answers["PRF-05"], answers["PRF-07"], answers["PRF-08"]) == (
            "sglang",
            "yes",
            "mooncake",
        )
        assert answers["CTX-01"] == INCIDENT_CONTEXT
        assert answers["CTX-03"] >= INCIDENT_CONTEXT
        assert answers["USE-01"] == "confidential" and answers["USE-02"] == "finance"
        assert answers["USE-05"] == "yes"
    assert launch["CTX-02"] == INCIDENT_POOL and launch["PRF-06"] == "0.5.19"
    assert launch["ISO-01"] == "no" and launch["CTX-05"] == "unknown"
    assert launch["CTX-04"] in ("manual_at_launch", "not_verified")
    assert remediated["CTX-02"] == 2_040_000 and remediated["PRF-06"] == "0.5.22"
    assert remediated["INC-01"] == "yes" and remediated["INC-04"] == 155


# -- in-process scoring -------------------------------------------------------------------------


def evidence_lines(finding):
    """The finding's evidence as the CLI and API print it."""
    return [item.as_text() for item in finding.evidence]


def test_launch_is_critical(questionnaire, engine, ruleset):
    result = score_file(questionnaire, engine, LAUNCH)
    assert result.risk_tier == "critical"
    assert {"KV-POOL-BELOW-CONTEXT", "SGLANG-DISAGG-REJECTION"} <= result.fired_rule_ids
    assert result.risk_score == expected_score(ruleset, result.fired_rule_ids)
    (pool_finding,) = [f for f in result.findings if f.rule_id == "KV-POOL-BELOW-CONTEXT"]
    assert pool_finding.section == "CTX"
    assert any("681280" in line for line in evidence_lines(pool_finding))
    assert any("1048576" in line for line in evidence_lines(pool_finding))
    for finding in result.findings:
        assert finding.points == ruleset.points[finding.severity]
    # no startup log given: the log rules cannot fire
    assert not {"LOG-POOL-BELOW-CONTEXT", "LOG-DECLARED-MISMATCH"} & result.fired_rule_ids


def test_remediated_has_no_critical_finding(questionnaire, engine, ruleset):
    result = score_file(questionnaire, engine, REMEDIATED)
    assert [f.rule_id for f in result.findings if f.severity == "critical"] == []
    assert result.risk_tier != "critical"
    assert (
        not {
            "KV-POOL-BELOW-CONTEXT",
            "SGLANG-DISAGG-REJECTION",
            "POOL-HEADROOM-THIN",
            "NO-OUTPUT-CONSISTENCY-TESTS",
            "REJECTION-PATH-UNTESTED",
            "CAPACITY-NOT-VERIFIED",
            "CAPACITY-CHECKED-ONCE",
        }
        & result.fired_rule_ids
    )
    assert result.risk_score == expected_score(ruleset, result.fired_rule_ids)
    launch = score_file(questionnaire, engine, LAUNCH)
    assert len(result.findings) < len(launch.findings)


def test_launch_log_fires_log_pool_below_context(questionnaire, engine, ruleset):
    parsed = parse_startup_log(LAUNCH_LOG, source_name=LAUNCH_LOG.name)
    assert parsed.parsed
    assert (parsed.pool, parsed.context) == (INCIDENT_POOL, INCIDENT_CONTEXT)
    result = score_file(questionnaire, engine, LAUNCH, LAUNCH_LOG)
    assert "LOG-POOL-BELOW-CONTEXT" in result.fired_rule_ids
    assert "LOG-DECLARED-MISMATCH" not in result.fired_rule_ids  # the log agrees with CTX-02
    assert result.risk_score == expected_score(ruleset, result.fired_rule_ids)
    (finding,) = [f for f in result.findings if f.rule_id == "LOG-POOL-BELOW-CONTEXT"]
    assert finding.severity == "critical" and finding.section == "CTX"
    pool_line = line_number_of(
        LAUNCH_LOG, f"max_total_num_tokens={INCIDENT_POOL}", f"#tokens: {INCIDENT_POOL}"
    )
    cites_line = [
        line
        for line in evidence_lines(finding)
        if LAUNCH_LOG.name in line
        and re.search(rf"(?<!\d){pool_line}(?!\d)", line)
        and str(INCIDENT_POOL) in line
    ]
    assert cites_line, (
        f"evidence should name {LAUNCH_LOG.name} line {pool_line}: {finding.evidence}"
    )
    entry = result.to_dict()["evidence"]["CTX-08"]
    assert entry["parsed"] is True
    assert (entry["pool"], entry["context"]) == (INCIDENT_POOL, INCIDENT_CONTEXT)
    assert pool_line in entry["lines"]


def test_launch_prefill_and_decode_logs_agree_with_the_declared_pools(questionnaire, engine):
    """log.pool is the smallest pool over every CTX-08 file; declared pool = min(CTX-02, CTX-03)."""
    decode = parse_startup_log(DECODE_LOG, source_name=DECODE_LOG.name)
    assert decode.parsed and decode.pool == load(LAUNCH)["answers"]["CTX-03"]
    result = score_file(questionnaire, engine, LAUNCH, DECODE_LOG, LAUNCH_LOG)
    assert "LOG-POOL-BELOW-CONTEXT" in result.fired_rule_ids
    assert "LOG-DECLARED-MISMATCH" not in result.fired_rule_ids
    (finding,) = [f for f in result.findings if f.rule_id == "LOG-POOL-BELOW-CONTEXT"]
    assert any(LAUNCH_LOG.name in line for line in evidence_lines(finding)), finding.evidence


def test_remediated_log_agrees_with_the_declared_pool(questionnaire, engine):
    parsed = parse_startup_log(REMEDIATED_LOG, source_name=REMEDIATED_LOG.name)
    assert parsed.parsed and parsed.pool >= parsed.context
    result = score_file(questionnaire, engine, REMEDIATED, REMEDIATED_LOG)
    assert not {"LOG-POOL-BELOW-CONTEXT", "LOG-DECLARED-MISMATCH"} & result.fired_rule_ids
    assert result.risk_tier != "critical"


# -- manage.py score (api.md) -------------------------------------------------------------------


def run_score(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "score", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


def assert_api_shape(document: dict[str, Any], ruleset) -> None:
    assert document["questionnaire"] == QUESTIONNAIRE
    assert document["ruleset"] == RULESET
    assert isinstance(document["risk_score"], int) and 0 <= document["risk_score"] <= 100
    assert document["risk_tier"] in ("low", "medium", "high", "critical")
    known = {rule.id: rule for rule in ruleset.rules}
    assert isinstance(document["findings"], list)
    for finding in document["findings"]:
        assert {"rule", "severity", "title", "section", "references", "evidence"} <= set(finding)
        rule = known[finding["rule"]]
        assert finding["severity"] == rule.severity
        assert isinstance(finding["title"], str) and finding["title"].strip()
        assert finding["section"] in SECTIONS
        assert finding["references"] == list(rule.references)
        assert all(isinstance(ref, str) for ref in finding["references"])
        assert isinstance(finding["evidence"], list)
        assert all(isinstance(line, str) for line in finding["evidence"])
    assert set(document["sections"]) == SECTIONS
    for section in document["sections"].values():
        assert 0.0 <= section["coverage"] <= 1.0
    assert isinstance(document["evidence"], dict)
    fired = [finding["rule"] for finding in document["findings"]]
    assert len(fired) == len(set(fired))
    assert document["risk_score"] == expected_score(ruleset, fired)


@pytest.mark.parametrize(
    ("example", "logs"),
    [
        (LAUNCH, ()),
        (LAUNCH, (LAUNCH_LOG,)),
        (LAUNCH, (LAUNCH_LOG, DECODE_LOG)),
        (REMEDIATED, ()),
        (REMEDIATED, (REMEDIATED_LOG,)),
    ],
    ids=[
        "launch",
        "launch with log",
        "launch with prefill and decode logs",
        "remediated",
        "remediated with log",
    ],
)
def test_cli_scores_the_examples(example, logs, questionnaire, engine, ruleset):
    args = [str(example.relative_to(ROOT)), "--as-of", AS_OF.isoformat(), "--ruleset", RULESET]
    for log in logs:
        args += ["--evidence", f"CTX-08={log.relative_to(ROOT)}"]
    completed = run_score(*args)
    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)  # one JSON object, nothing else on stdout
    assert isinstance(document, dict)
    assert_api_shape(document, ruleset)
    in_process = score_file(questionnaire, engine, example, *logs)
    assert {f["rule"] for f in document["findings"]} == in_process.fired_rule_ids
    assert document["risk_score"] == in_process.risk_score
    assert document["risk_tier"] == in_process.risk_tier
    for section, coverage in in_process.sections.items():
        assert document["sections"][section]["coverage"] == pytest.approx(coverage.coverage)
    if example == LAUNCH:
        assert document["risk_tier"] == "critical"
        assert {"KV-POOL-BELOW-CONTEXT", "SGLANG-DISAGG-REJECTION"} <= set(fired_ids(document))
    else:
        assert all(f["severity"] != "critical" for f in document["findings"])
    if logs:
        entry = document["evidence"]["CTX-08"]
        assert {"parsed", "engine", "pool", "context", "lines"} <= set(entry)
        assert entry["parsed"] is True
        assert entry["engine"] == "sglang"
        assert isinstance(entry["pool"], int) and isinstance(entry["context"], int)
        assert entry["lines"] and all(isinstance(n, int) and n >= 1 for n in entry["lines"])
        if example == LAUNCH:
            # smallest pool and largest context over every file of CTX-08
            assert (entry["pool"], entry["context"]) == (INCIDENT_POOL, INCIDENT_CONTEXT)
            assert "LOG-POOL-BELOW-CONTEXT" in fired_ids(document)
            assert "LOG-DECLARED-MISMATCH" not in fired_ids(document)
        else:
            assert not {"LOG-POOL-BELOW-CONTEXT", "LOG-DECLARED-MISMATCH"} & set(
                fired_ids(document)
            )
    else:
        assert "CTX-08" not in document["evidence"]


def fired_ids(document: dict[str, Any]) -> list[str]:
    return [finding["rule"] for finding in document["findings"]]


BAD_ANSWERS = {"CTX-01": "1M", "PRF-05": "foo", "XYZ-99": "yes", "CHG-03": -5}


def test_invalid_answers_are_rejected_naming_every_code(questionnaire):
    answers = {**load(LAUNCH)["answers"], **BAD_ANSWERS}
    with pytest.raises(AnswerValidationError) as raised:
        validate_answers(questionnaire, answers)
    assert set(raised.value.errors) == set(BAD_ANSWERS)


def test_cli_rejects_invalid_answers_naming_every_code(tmp_path):
    document = load(LAUNCH)
    document["answers"].update(BAD_ANSWERS)
    path = tmp_path / "invalid.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    completed = run_score(str(path), "--as-of", AS_OF.isoformat())
    assert completed.returncode == 2, completed.stderr
    assert completed.stdout == ""
    for code in BAD_ANSWERS:
        assert code in completed.stderr, f"stderr does not name {code}: {completed.stderr}"
    assert "Traceback" not in completed.stderr
