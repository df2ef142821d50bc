"""Table-driven tests pinning the eight rules ruleset incident-2026-kv v2 adds (spec: v2.md),
on both sides of each threshold, and ruleset v2 on questionnaire v1 answers.

Same design as test_rules_table.py: a complete answer set on which no rule fires, small
overrides per case, and evidence files (the model's config.json for PRF-10, probe results for
PRB-02) parsed by the real parsers. Expected values come from the spec, never from the ruleset.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from questionnaires.validation import missing_required, validate_answers
from scoring.evidence import parse_evidence
from tests.scoring.test_rules_table import BASELINE as V1_BASELINE
from tests.scoring.test_rules_table import answers_with as answers_over

ROOT = Path(__file__).resolve().parents[2]
LLAMA_70B = ROOT / "tests" / "fixtures" / "model_configs" / "llama-3-70b-architecture.config.json"
AS_OF = dt.date(2026, 12, 1)
GIB = 2**30
BYTES_PER_TOKEN_BF16 = 327_680  # Llama-3.x-70B, engine-logs.md "Sizing check"

# v2.md, "Ruleset v2": id → (severity, section).
SPEC_V2_RULES = {
    "PROBE-OVERSIZE-ACCEPTED": ("critical", "PRB"),
    "PROBE-CROSS-TENANT-ECHO": ("critical", "PRB"),
    "PROBE-SHARED-PREFIX-CACHE": ("high", "PRB"),
    "PROBE-CONTRADICTS-ANSWERS": ("high", "PRB"),
    "PROBE-DECLINED": ("medium", "PRB"),
    "PROBE-NOT-RUN": ("low", "PRB"),
    "SIZING-POOL-EXCEEDS-GPU-MEMORY": ("high", "PRF"),
    "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY": ("high", "PRF"),
}

# 8 GPUs x 80 GiB = 640 GiB: exactly 2,097,152 tokens of Llama-70B KV in BF16.
GPUS, GPU_GIB = 8, 80
FULL_TOKENS = GPUS * GPU_GIB * GIB // BYTES_PER_TOKEN_BF16
assert FULL_TOKENS == 2_097_152

# v1's quiet baseline, answering v2: nothing offloaded (so the sizing rules can read the GPU
# memory), BF16 KV on 8 x 80 GiB, and a probe authorised.
BASELINE: dict[str, Any] = {
    **{k: v for k, v in V1_BASELINE.items() if k != "KV-07"},
    "KV-06": "no",
    "PRF-11": "bf16",
    "PRF-12": GPU_GIB,
    "PRF-13": GPUS,
    "PRB-01": "yes",
}
CLEAN_PROBE = {"oversize": "rejected", "canary": "clean", "prefix_cache": "isolated"}


@dataclass(frozen=True)
class Case:
    rule: str
    fires: bool
    when: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    probes: Sequence[Mapping[str, str]] = (CLEAN_PROBE,)  # each: check → result
    model: bool = True  # give the Llama-70B config.json as PRF-10

    @property
    def id(self) -> str:
        return f"{self.rule} {'fires' if self.fires else 'does not fire'} when {self.when}"


def F(rule, when, overrides=None, **evidence) -> Case:
    return Case(rule, True, when, overrides or {}, **evidence)


def N(rule, when, overrides=None, **evidence) -> Case:
    return Case(rule, False, when, overrides or {}, **evidence)


def probe(**checks: str) -> dict[str, str]:
    return {**CLEAN_PROBE, **checks}


CASES = [
    # PROBE-OVERSIZE-ACCEPTED: probe.oversize = accepted
    F(
        "PROBE-OVERSIZE-ACCEPTED",
        "the oversized prompt got 2xx",
        probes=[probe(oversize="accepted")],
    ),
    N("PROBE-OVERSIZE-ACCEPTED", "it was rejected", probes=[probe(oversize="rejected")]),
    N("PROBE-OVERSIZE-ACCEPTED", "it was inconclusive", probes=[probe(oversize="inconclusive")]),
    N("PROBE-OVERSIZE-ACCEPTED", "no probe result exists", probes=[]),
    N("PROBE-OVERSIZE-ACCEPTED", "the probe skipped that check", probes=[{"canary": "clean"}]),
    # PROBE-CROSS-TENANT-ECHO: probe.canary = leak
    F("PROBE-CROSS-TENANT-ECHO", "a canary leaked", probes=[probe(canary="leak")]),
    N("PROBE-CROSS-TENANT-ECHO", "the canaries stayed clean", probes=[probe(canary="clean")]),
    N("PROBE-CROSS-TENANT-ECHO", "it was inconclusive", probes=[probe(canary="inconclusive")]),
    F(
        "PROBE-CROSS-TENANT-ECHO",
        "the latest of two results leaked",
        probes=[CLEAN_PROBE, probe(canary="leak")],
    ),
    N(
        "PROBE-CROSS-TENANT-ECHO",
        "a leak was fixed by the latest result",
        probes=[probe(canary="leak"), CLEAN_PROBE],
    ),
    # PROBE-SHARED-PREFIX-CACHE: probe.prefix_cache = shared
    F(
        "PROBE-SHARED-PREFIX-CACHE",
        "cross-tenant hits are measurable",
        probes=[probe(prefix_cache="shared")],
    ),
    N(
        "PROBE-SHARED-PREFIX-CACHE",
        "the cache is isolated",
        probes=[probe(prefix_cache="isolated")],
    ),
    N(
        "PROBE-SHARED-PREFIX-CACHE",
        "no cache was seen",
        probes=[probe(prefix_cache="no_cache_seen")],
    ),
    # PROBE-CONTRADICTS-ANSWERS
    F(
        "PROBE-CONTRADICTS-ANSWERS",
        "shared cache but KV-04 = no (KV-05 hidden)",
        {"KV-04": "no", "KV-05": None},
        probes=[probe(prefix_cache="shared")],
    ),
    F(
        "PROBE-CONTRADICTS-ANSWERS",
        "shared cache but KV-05 = per_tenant_isolated",
        {"KV-05": "per_tenant_isolated"},
        probes=[probe(prefix_cache="shared")],
    ),
    F(
        "PROBE-CONTRADICTS-ANSWERS",
        "shared cache but KV-05 = per_request",
        {"KV-05": "per_request"},
        probes=[probe(prefix_cache="shared")],
    ),
    N(
        "PROBE-CONTRADICTS-ANSWERS",
        "shared cache declared as shared",
        {"KV-05": "shared_across_tenants"},
        probes=[probe(prefix_cache="shared")],
    ),
    N(
        "PROBE-CONTRADICTS-ANSWERS",
        "KV-04 = no and the cache is isolated",
        {"KV-04": "no", "KV-05": None},
        probes=[probe(prefix_cache="isolated")],
    ),
    F(
        "PROBE-CONTRADICTS-ANSWERS",
        "oversize accepted but CTX-05 = error_4xx",
        {"CTX-05": "error_4xx"},
        probes=[probe(oversize="accepted")],
    ),
    F(
        "PROBE-CONTRADICTS-ANSWERS",
        "oversize accepted, CTX-05 = error_4xx, only that check run",
        {"CTX-05": "error_4xx"},
        probes=[{"oversize": "accepted"}],
    ),
    N(
        "PROBE-CONTRADICTS-ANSWERS",
        "oversize accepted and CTX-05 = silent_truncate",
        {"CTX-05": "silent_truncate"},
        probes=[probe(oversize="accepted")],
    ),
    N(
        "PROBE-CONTRADICTS-ANSWERS",
        "oversize rejected and CTX-05 = error_4xx",
        {"CTX-05": "error_4xx"},
        probes=[probe(oversize="rejected")],
    ),
    N(
        "PROBE-CONTRADICTS-ANSWERS",
        "no probe result exists",
        {"KV-04": "no", "KV-05": None},
        probes=[],
    ),
    # PROBE-DECLINED: PRB-01 = no
    F("PROBE-DECLINED", "PRB-01 = no", {"PRB-01": "no"}, probes=[]),
    N("PROBE-DECLINED", "PRB-01 = yes", {"PRB-01": "yes"}),
    N("PROBE-DECLINED", "PRB-01 = unknown", {"PRB-01": "unknown"}, probes=[]),
    # PROBE-NOT-RUN: USE-01 ∈ {confidential, regulated} and PRB-01 ≠ no (or blank) and no result
    F("PROBE-NOT-RUN", "confidential data, authorised, never run", probes=[]),
    F(
        "PROBE-NOT-RUN",
        "regulated data, PRB-01 unknown",
        {"USE-01": "regulated", "PRB-01": "unknown"},
        probes=[],
    ),
    F("PROBE-NOT-RUN", "confidential data and PRB-01 blank", {"PRB-01": None}, probes=[]),
    N("PROBE-NOT-RUN", "a probe result is on file"),
    N(
        "PROBE-NOT-RUN",
        "the vendor declined (PROBE-DECLINED covers it)",
        {"PRB-01": "no"},
        probes=[],
    ),
    N("PROBE-NOT-RUN", "the data is internal", {"USE-01": "internal"}, probes=[]),
    N("PROBE-NOT-RUN", "the data is public", {"USE-01": "public"}, probes=[]),
    # SIZING-POOL-EXCEEDS-GPU-MEMORY: KV-06 = no and kv_gib(pool) > PRF-12 x PRF-13
    F(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "the pool needs one token more than 640 GiB",
        {"CTX-02": FULL_TOKENS + 1, "CTX-03": FULL_TOKENS + 1},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "the pool needs exactly 640 GiB",
        {"CTX-02": FULL_TOKENS, "CTX-03": FULL_TOKENS},
    ),
    F(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "the smaller decode pool still does not fit",
        {"CTX-02": 3_000_000, "CTX-03": FULL_TOKENS + 1},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "the smaller decode pool fits (pool = the smaller)",
        {"CTX-02": 3_000_000, "CTX-03": FULL_TOKENS},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "the KV cache is FP8 (half the bytes)",
        {"CTX-02": FULL_TOKENS + 1, "CTX-03": FULL_TOKENS + 1, "PRF-11": "fp8"},
    ),
    F(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "an unknown dtype counts 1 byte and still overflows",
        {"CTX-02": 2 * FULL_TOKENS + 2, "CTX-03": 2 * FULL_TOKENS + 2, "PRF-11": "unknown"},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "KV cache is offloaded (KV-06 = yes)",
        {"CTX-02": FULL_TOKENS + 1, "CTX-03": FULL_TOKENS + 1, "KV-06": "yes", "KV-07": "yes"},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "KV-06 = unknown",
        {"CTX-02": FULL_TOKENS + 1, "CTX-03": FULL_TOKENS + 1, "KV-06": "unknown", "KV-07": "yes"},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "the GPU count is blank",
        {"CTX-02": FULL_TOKENS + 1, "CTX-03": FULL_TOKENS + 1, "PRF-13": None},
    ),
    N(
        "SIZING-POOL-EXCEEDS-GPU-MEMORY",
        "no model file was given",
        {"CTX-02": FULL_TOKENS + 1, "CTX-03": FULL_TOKENS + 1},
        model=False,
    ),
    # SIZING-CONTEXT-EXCEEDS-GPU-MEMORY: KV-06 = no and kv_gib(CTX-01) > PRF-12 x PRF-13
    F(
        "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY",
        "one request needs more than 640 GiB",
        {"CTX-01": FULL_TOKENS + 1, "CTX-02": 3_000_000, "CTX-03": 3_000_000},
    ),
    N(
        "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY",
        "one request needs exactly 640 GiB",
        {"CTX-01": FULL_TOKENS, "CTX-02": 3_000_000, "CTX-03": 3_000_000},
    ),
    F(
        "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY",
        "one GPU of 80 GiB holds less than 1,048,576 tokens",
        {"PRF-13": 1},
    ),
    N(
        "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY",
        "four GPUs of 80 GiB (320 GiB) hold exactly 1,048,576 tokens",
        {"PRF-12": 80, "PRF-13": 4},
    ),
    N(
        "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY",
        "the memory per GPU is blank",
        {"PRF-13": 1, "PRF-12": None},
    ),
    N("SIZING-CONTEXT-EXCEEDS-GPU-MEMORY", "no model file was given", {"PRF-13": 1}, model=False),
]


@pytest.fixture(scope="module")
def catalog():
    from scoring.registry import builtin_catalog

    return builtin_catalog()


@pytest.fixture(scope="module")
def engine(catalog):
    return catalog.compiled("incident-2026-kv@2")


def probe_result(directory: Path, index: int, checks: Mapping[str, str]):
    document = {
        "endpoint": "https://api.example.com",
        "model": "example/model-1",
        "declared_context": 1_048_576,
        "checks": {check: {"result": result} for check, result in checks.items()},
        "tokens_spent": 1000,
    }
    path = directory / f"probe-{index}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = parse_evidence(path, parser="probe_result", source_name=path.name)
    assert result.parsed, result.reason
    return result


def evidence_for(directory: Path, case: Case) -> dict[str, list]:
    evidence: dict[str, list] = {}
    if case.model:
        evidence["PRF-10"] = [parse_evidence(LLAMA_70B, parser="model_config")]
    if case.probes:
        evidence["PRB-02"] = [probe_result(directory, i, c) for i, c in enumerate(case.probes)]
    return evidence


def fired(
    catalog, engine, overrides, evidence, questionnaire="ai-inference-isolation@2", baseline=None
):
    answers = answers_over(overrides, BASELINE if baseline is None else baseline)
    clean = validate_answers(catalog.questionnaire(questionnaire), answers)
    return {
        f.rule_id: f for f in engine.score(clean.values, as_of=AS_OF, evidence=evidence).findings
    }


def test_the_new_rules_are_the_spec_s_with_their_severities_and_sections(engine, catalog):
    new = {rule.spec.id: (rule.spec.severity, rule.section) for rule in engine.rules[42:]}

    assert new == SPEC_V2_RULES
    assert len(engine.rules) == 50
    v1 = catalog.compiled("incident-2026-kv@1")
    assert [(r.spec.id, r.spec.when, r.spec.severity, r.section) for r in v1.rules] == [
        (r.spec.id, r.spec.when, r.spec.severity, r.section) for r in engine.rules[:42]
    ]


def test_the_table_covers_every_new_rule_on_both_sides():
    for rule in SPEC_V2_RULES:
        outcomes = {case.fires for case in CASES if case.rule == rule}
        assert outcomes == {True, False}, rule


def test_the_baseline_is_complete_and_fires_nothing(catalog, engine, tmp_path):
    questionnaire = catalog.questionnaire("ai-inference-isolation@2")
    clean = validate_answers(questionnaire, BASELINE)

    assert missing_required(questionnaire, clean.values) == []
    baseline = Case("", False, "baseline")
    assert fired(catalog, engine, {}, evidence_for(tmp_path, baseline)) == {}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rule(case, catalog, engine, tmp_path):
    findings = fired(catalog, engine, case.overrides, evidence_for(tmp_path, case))

    assert (case.rule in findings) is case.fires


def test_a_sizing_finding_cites_the_model_file_and_the_figures(catalog, engine, tmp_path):
    case = Case("", True, "", {"PRF-13": 1})
    finding = fired(catalog, engine, case.overrides, evidence_for(tmp_path, case))[
        "SIZING-CONTEXT-EXCEEDS-GPU-MEMORY"
    ]

    items = {(item.kind, item.code or item.name): item for item in finding.evidence}
    assert items[("derived", "kv_bytes")].value == BYTES_PER_TOKEN_BF16
    assert items[("derived", "gpu_gib")].value == 80
    assert items[("model", "PRF-10")].values == {"values_per_token": BYTES_PER_TOKEN_BF16 // 2}
    assert {("answer", c) for c in ("KV-06", "CTX-01", "PRF-11", "PRF-12", "PRF-13")} <= set(items)


def test_a_probe_finding_cites_the_check_and_its_result(catalog, engine, tmp_path):
    case = Case("", True, "", probes=[probe(canary="leak")])
    finding = fired(catalog, engine, {}, evidence_for(tmp_path, case))["PROBE-CROSS-TENANT-ECHO"]

    [item] = finding.evidence
    assert (item.kind, item.code, item.file, item.name, item.value) == (
        "probe", "PRB-02", "probe-0.json", "canary", "leak",
    )  # fmt: skip


def test_an_unparsable_probe_file_is_no_probe_result(catalog, engine, tmp_path):
    path = tmp_path / "probe.json"
    path.write_text('{"endpoint": "x"}', encoding="utf-8")
    unreadable = parse_evidence(path, parser="probe_result")

    findings = fired(catalog, engine, {}, {"PRB-02": [unreadable]})

    assert unreadable.parsed is False
    assert "PROBE-NOT-RUN" in findings


# -- ruleset v2 on questionnaire v1 answers -----------------------------------------------------


def test_v1_answers_score_under_v2_with_only_the_or_blank_rule_added(catalog, engine, tmp_path):
    v1_answers = {
        k: v
        for k, v in BASELINE.items()
        if k in catalog.questionnaire("ai-inference-isolation@1").questions
    }
    v1_answers["KV-07"] = "yes"
    v1_answers["KV-06"] = "yes"
    clean = validate_answers(catalog.questionnaire("ai-inference-isolation@1"), v1_answers)

    v1 = catalog.compiled("incident-2026-kv@1").score(clean.values, as_of=AS_OF)
    v2 = engine.score(clean.values, as_of=AS_OF)

    assert v1.findings == ()
    assert [f.rule_id for f in v2.findings] == ["PROBE-NOT-RUN"]  # confidential, never probed


@pytest.mark.parametrize("example", ["incident-2026-launch.json", "incident-2026-remediated.json"])
def test_the_v1_incident_fixtures_keep_every_v1_finding_under_v2(catalog, engine, example):
    document = json.loads((ROOT / "examples" / example).read_text(encoding="utf-8"))
    clean = validate_answers(catalog.questionnaire("ai-inference-isolation@1"), document["answers"])

    v1 = catalog.compiled("incident-2026-kv@1").score(clean.values, as_of=AS_OF)
    v2 = engine.score(clean.values, as_of=AS_OF)

    v1_ids = [f.rule_id for f in v1.findings]
    v2_ids = [f.rule_id for f in v2.findings]
    assert set(v1_ids) <= set(v2_ids)
    assert set(v2_ids) - set(v1_ids) <= {"PROBE-NOT-RUN"}
    for finding in v1.findings:
        again = next(f for f in v2.findings if f.rule_id == finding.rule_id)
        assert (again.severity, again.section, again.evidence) == (
            finding.severity, finding.section, finding.evidence,
        )  # fmt: skip
