"""Deviations from the scoring contracts (questionnaire-v1.md, rules-v1.md, v2.md) found by the
contract audit. Expected findings and scores are derived from the spec's rules and points, never
copied from the engine's output."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from questionnaires.bounds import VALUES_PER_TOKEN_MAX, integer_maximum
from questionnaires.validation import AnswerValidationError, validate_answers
from scoring.evidence import parse_evidence
from scoring.registry import builtin_catalog
from tests.scoring.test_rules_table import BASELINE as V1_BASELINE
from tests.scoring.test_rules_table import answers_with
from tests.scoring.test_rules_v2_table import BASELINE as V2_BASELINE
from tests.scoring.test_rules_v2_table import LLAMA_70B

AS_OF = dt.date(2026, 12, 1)
SPEC_POINTS = {"critical": 40, "high": 15, "medium": 5, "low": 1}  # rules-v1.md
LEAKY_PROBE = {"oversize": "accepted", "canary": "leak", "prefix_cache": "shared"}


@pytest.fixture(scope="module")
def catalog():
    return builtin_catalog()


def probe_file(directory: Path, checks: dict[str, str]):
    document = {
        "endpoint": "https://api.example.com",
        "model": "example/model-1",
        "declared_context": 1_048_576,
        "checks": {check: {"result": result} for check, result in checks.items()},
    }
    path = directory / "probe.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = parse_evidence(path, parser="probe_result", source_name=path.name)
    assert result.parsed, result.reason
    return result


def score(catalog, questionnaire, answers, evidence, ruleset="incident-2026-kv@2"):
    clean = validate_answers(catalog.questionnaire(questionnaire), answers)
    return catalog.compiled(ruleset).score(clean.values, as_of=AS_OF, evidence=evidence)


# -- a hidden question's evidence is ignored by scoring ------------------------------------------
# questionnaire-v1.md: "a hidden question's answer is ignored by scoring"; rules-v1.md: a rule
# reading a hidden answer is not fired. PRB-02 (the probe result) is shown only when PRB-01 = yes.


def test_a_probe_result_under_a_declined_probe_is_ignored(catalog, tmp_path):
    """PRB-01 = no hides PRB-02: only PROBE-DECLINED (medium) fires, not the probe's checks."""
    answers = answers_with({"PRB-01": "no"}, V2_BASELINE)
    evidence = {
        "PRF-10": [parse_evidence(LLAMA_70B, parser="model_config")],
        "PRB-02": [probe_file(tmp_path, LEAKY_PROBE)],
    }

    result = score(catalog, "ai-inference-isolation@2", answers, evidence)

    assert result.fired_rule_ids == {"PROBE-DECLINED"}
    assert result.risk_score == SPEC_POINTS["medium"]
    assert result.risk_tier == "low"  # 5 < 10, no high or critical rule


def test_a_probe_result_on_v1_answers_does_not_fire_probe_rules_under_v2(catalog, tmp_path):
    """v2.md: v1 assessments rescored with ruleset v2 — rules that read probe results do not fire
    on them, except where a rule says "or blank" (PROBE-NOT-RUN: confidential data, PRB-01
    blank, and no probe result the answers let scoring read)."""
    v1_questions = catalog.questionnaire("ai-inference-isolation@1").questions
    answers = {code: value for code, value in V1_BASELINE.items() if code in v1_questions}

    result = score(
        catalog,
        "ai-inference-isolation@1",
        answers,
        {"PRB-02": [probe_file(tmp_path, LEAKY_PROBE)]},
    )

    assert result.fired_rule_ids == {"PROBE-NOT-RUN"}
    assert result.risk_score == SPEC_POINTS["low"]
    assert result.risk_tier == "low"


def test_the_probe_result_still_counts_when_the_probe_was_authorised(catalog, tmp_path):
    result = score(
        catalog,
        "ai-inference-isolation@2",
        dict(V2_BASELINE),
        {"PRB-02": [probe_file(tmp_path, {"canary": "leak"})]},
    )

    assert result.fired_rule_ids == {"PROBE-CROSS-TENANT-ECHO"}
    assert result.risk_score == SPEC_POINTS["critical"]
    assert result.risk_tier == "critical"
    # The file stays in the result's evidence either way (it is kept, never lost).
    assert result.to_dict()["evidence"]["PRB-02"]


# -- what validation accepts, scoring can compute ------------------------------------------------


def test_gpu_memory_given_in_bytes_is_refused_naming_the_question(catalog):
    """PRF-12 is GiB; 80 GiB typed as bytes (85,899,345,920) overflowed the sizing rules'
    64-bit integers (gpu_gib × 2³⁰) and every scoring run failed. It is refused at the answer,
    with the question's code and its largest value."""
    answers = answers_with({"PRF-12": 80 * 2**30, "PRF-13": 8}, V2_BASELINE)

    with pytest.raises(AnswerValidationError) as refused:
        score(catalog, "ai-inference-isolation@2", answers, {})

    assert set(refused.value.errors) == {"PRF-12"}
    assert "65,536" in str(refused.value.errors["PRF-12"][0])


def test_the_largest_accepted_sizing_answers_score(catalog):
    """At every bound together, with the largest model file accepted, the rules compute."""
    answers = answers_with(
        {
            "PRF-12": integer_maximum("PRF-12"),
            "PRF-13": integer_maximum("PRF-13"),
            "PRF-11": "bf16",
            "KV-06": "no",
            "CTX-01": integer_maximum("CTX-01"),
            "CTX-02": integer_maximum("CTX-02"),
        },
        V2_BASELINE,
    )
    largest = {"num_hidden_layers": 2**15, "num_attention_heads": 2**8, "head_dim": 2**7}
    model = parse_evidence(json.dumps(largest).encode(), parser="model_config")
    assert model.parsed and model.sizing.values_per_token == VALUES_PER_TOKEN_MAX

    result = score(catalog, "ai-inference-isolation@2", answers, {"PRF-10": [model]})

    assert result.risk_score is not None
