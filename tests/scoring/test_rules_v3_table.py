"""Table-driven tests pinning the four rules ruleset incident-2026-kv v3 adds (spec: v3.md), on
both sides of each condition and through the `show_if` of the questions they read, and ruleset
v3 on questionnaire v1 and v2 answers (no CACHE-* rule; PROBE-CONTEXT-OVERCLAIMED from a v2
probe result).

The design, the cases' helpers and the evidence files are those of test_rules_v2_table.py,
through the pure engine. Expected values come from the spec, never from the ruleset.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from questionnaires.validation import missing_required, validate_answers
from tests.scoring.test_rules_v2_table import AS_OF, CLEAN_PROBE, ROOT, F, N, evidence_for, probe
from tests.scoring.test_rules_v2_table import BASELINE as V2_BASELINE
from tests.scoring.test_rules_v2_table import fired as fired_over

V1, V2, V3 = (f"ai-inference-isolation@{v}" for v in ("1", "2", "3"))

# v3.md, "Ruleset v3": id → (severity, section).
SPEC_V3_RULES = {
    "CACHE-SALT-FROM-REQUEST": ("high", "KV"),
    "CACHE-OFFLOAD-KEY-WITHOUT-SALT": ("high", "KV"),
    "CACHE-OFFLOAD-SALT-UNTESTED": ("low", "KV"),
    "PROBE-CONTEXT-OVERCLAIMED": ("high", "PRB"),
}
SPEC_RULE_COUNT = 54

# v2's quiet baseline answering v3: the prefix cache is per tenant (KV-05), so KV-10 is asked,
# and the gateway sets the salt. Nothing is offloaded (KV-06 = no): KV-11 and KV-12 are hidden.
BASELINE: dict[str, Any] = {**V2_BASELINE, "KV-10": "salt_set_by_gateway"}
OFFLOADED = {"KV-06": "yes", "KV-07": "yes", "KV-12": "LMCache 0.3 on SGLang 0.5.22"}

CASES = [
    # CACHE-SALT-FROM-REQUEST: KV-10 ∈ {salt_from_request, unknown}
    F("CACHE-SALT-FROM-REQUEST", "the salt comes from the request", {"KV-10": "salt_from_request"}),
    F("CACHE-SALT-FROM-REQUEST", "the vendor does not know", {"KV-10": "unknown"}),
    N("CACHE-SALT-FROM-REQUEST", "the gateway sets it", {"KV-10": "salt_set_by_gateway"}),
    N("CACHE-SALT-FROM-REQUEST", "one instance per tenant", {"KV-10": "separate_instances"}),
    N(
        "CACHE-SALT-FROM-REQUEST",
        "KV-10 is hidden (and ignored): the cache is shared (KV-05)",
        {"KV-05": "shared_across_tenants", "KV-10": "salt_from_request"},
    ),
    N(
        "CACHE-SALT-FROM-REQUEST",
        "KV-10 is hidden (and ignored): no prefix caching (KV-04 = no hides KV-05)",
        {"KV-04": "no", "KV-05": None, "KV-10": "unknown"},
    ),
    # CACHE-OFFLOAD-KEY-WITHOUT-SALT: KV-11 ∈ {no, unknown}
    F("CACHE-OFFLOAD-KEY-WITHOUT-SALT", "offload keys lack the salt", {**OFFLOADED, "KV-11": "no"}),
    F(
        "CACHE-OFFLOAD-KEY-WITHOUT-SALT",
        "the vendor does not know",
        {**OFFLOADED, "KV-11": "unknown"},
    ),
    N("CACHE-OFFLOAD-KEY-WITHOUT-SALT", "tested", {**OFFLOADED, "KV-11": "yes_tested"}),
    N("CACHE-OFFLOAD-KEY-WITHOUT-SALT", "documented", {**OFFLOADED, "KV-11": "yes_documented"}),
    N(
        "CACHE-OFFLOAD-KEY-WITHOUT-SALT",
        "KV-11 is hidden (and ignored): nothing offloaded (KV-06 = no)",
        {"KV-06": "no", "KV-11": "no"},
    ),
    N(
        "CACHE-OFFLOAD-KEY-WITHOUT-SALT",
        "KV-11 is hidden (and ignored): the cache is not per tenant (KV-05)",
        {**OFFLOADED, "KV-05": "per_request", "KV-10": None, "KV-11": "unknown"},
    ),
    # CACHE-OFFLOAD-SALT-UNTESTED: KV-11 = yes_documented
    F("CACHE-OFFLOAD-SALT-UNTESTED", "documented", {**OFFLOADED, "KV-11": "yes_documented"}),
    N("CACHE-OFFLOAD-SALT-UNTESTED", "tested", {**OFFLOADED, "KV-11": "yes_tested"}),
    N("CACHE-OFFLOAD-SALT-UNTESTED", "offload keys lack the salt", {**OFFLOADED, "KV-11": "no"}),
    N("CACHE-OFFLOAD-SALT-UNTESTED", "KV-11 is hidden (KV-06 = no)", {"KV-11": None}),
    # PROBE-CONTEXT-OVERCLAIMED: probe.oversize = overclaimed
    F(
        "PROBE-CONTEXT-OVERCLAIMED",
        "the endpoint serves less than declared",
        probes=[probe(oversize="overclaimed")],
    ),
    N("PROBE-CONTEXT-OVERCLAIMED", "oversize rejected", probes=[probe(oversize="rejected")]),
    N("PROBE-CONTEXT-OVERCLAIMED", "oversize accepted", probes=[probe(oversize="accepted")]),
    N("PROBE-CONTEXT-OVERCLAIMED", "inconclusive", probes=[probe(oversize="inconclusive")]),
    N("PROBE-CONTEXT-OVERCLAIMED", "no probe result exists", probes=[]),
    N(
        "PROBE-CONTEXT-OVERCLAIMED",
        "the probe skipped that check",
        probes=[{"canary": "clean"}],
    ),
    F(
        "PROBE-CONTEXT-OVERCLAIMED",
        "the latest of two results over-claims",
        probes=[CLEAN_PROBE, probe(oversize="overclaimed")],
    ),
    N(
        "PROBE-CONTEXT-OVERCLAIMED",
        "the declared context was corrected by the latest result",
        probes=[probe(oversize="overclaimed"), CLEAN_PROBE],
    ),
]


@pytest.fixture(scope="module")
def catalog():
    from scoring.registry import builtin_catalog

    return builtin_catalog()


@pytest.fixture(scope="module")
def engine(catalog):
    return catalog.compiled("incident-2026-kv@3")


def fired(catalog, engine, overrides, evidence, questionnaire=V3):
    return fired_over(catalog, engine, overrides, evidence, questionnaire, baseline=BASELINE)


def test_the_new_rules_are_the_spec_s_with_their_severities_and_sections(engine, catalog):
    v2 = catalog.compiled("incident-2026-kv@2")
    new = {
        rule.spec.id: (rule.spec.severity, rule.section) for rule in engine.rules[len(v2.rules) :]
    }

    assert new == SPEC_V3_RULES
    assert len(engine.rules) == SPEC_RULE_COUNT
    assert [(r.spec, r.section) for r in v2.rules] == [
        (r.spec, r.section) for r in engine.rules[: len(v2.rules)]
    ]


def test_the_table_covers_every_new_rule_on_both_sides():
    for rule in SPEC_V3_RULES:
        assert {case.fires for case in CASES if case.rule == rule} == {True, False}, rule


def test_the_baseline_is_complete_and_fires_nothing(catalog, engine, tmp_path):
    questionnaire = catalog.questionnaire(V3)
    clean = validate_answers(questionnaire, BASELINE)

    assert missing_required(questionnaire, clean.values) == []
    assert fired(catalog, engine, {}, evidence_for(tmp_path, N("", "baseline"))) == {}


@pytest.mark.parametrize(
    ("answers", "missing"),
    [
        ({**BASELINE, "KV-10": None}, ["KV-10"]),
        ({**BASELINE, **OFFLOADED}, ["KV-11"]),  # KV-12 is optional
        ({**BASELINE, **OFFLOADED, "KV-05": "per_request", "KV-10": None}, []),
    ],
    ids=["KV-10 asked for a per-tenant cache", "KV-11 asked when offloading", "neither asked"],
)
def test_the_new_questions_are_required_only_where_shown(catalog, answers, missing):
    questionnaire = catalog.questionnaire(V3)
    clean = validate_answers(questionnaire, {k: v for k, v in answers.items() if v is not None})

    assert missing_required(questionnaire, clean.values) == missing


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rule(case, catalog, engine, tmp_path):
    findings = fired(catalog, engine, case.overrides, evidence_for(tmp_path, case))

    assert (case.rule in findings) is case.fires


def test_the_overclaimed_finding_cites_the_probe_check(catalog, engine, tmp_path):
    case = F("", "", probes=[probe(oversize="overclaimed")])
    finding = fired(catalog, engine, {}, evidence_for(tmp_path, case))["PROBE-CONTEXT-OVERCLAIMED"]

    [item] = finding.evidence
    assert (item.kind, item.code, item.name, item.value) == (
        "probe", "PRB-02", "oversize", "overclaimed",
    )  # fmt: skip


# -- ruleset v3 on questionnaire v1 and v2 answers ----------------------------------------------


def older_answers(catalog, version: str, answers: dict[str, Any]) -> dict[str, Any]:
    """`answers` cut to the questions of an older questionnaire version, validated there."""
    questionnaire = catalog.questionnaire(version)
    kept = {k: v for k, v in answers.items() if k in questionnaire.questions}
    return validate_answers(questionnaire, kept).values


@pytest.mark.parametrize("version", [V1, V2])
@pytest.mark.parametrize(
    "overrides",
    [{}, {**OFFLOADED, "KV-11": "no"}, {"KV-10": "unknown"}],
    ids=["baseline", "offloading", "salt unknown"],
)
def test_older_answers_gain_no_cache_rule_under_v3(catalog, engine, tmp_path, version, overrides):
    answers = {**BASELINE, **overrides}
    v2 = catalog.compiled("incident-2026-kv@2")
    evidence = evidence_for(tmp_path, N("", "v2 evidence")) if version == V2 else {}
    values = older_answers(catalog, version, answers)

    before = {f.rule_id for f in v2.score(values, as_of=AS_OF, evidence=evidence).findings}
    after = {f.rule_id for f in engine.score(values, as_of=AS_OF, evidence=evidence).findings}

    assert after == before
    assert not {rule for rule in after if rule.startswith("CACHE-")}


def test_a_v2_assessment_with_an_overclaimed_probe_gains_only_that_rule(catalog, engine, tmp_path):
    evidence = evidence_for(tmp_path, F("", "", probes=[probe(oversize="overclaimed")]))
    values = older_answers(catalog, V2, BASELINE)
    v2 = catalog.compiled("incident-2026-kv@2")

    before = {f.rule_id for f in v2.score(values, as_of=AS_OF, evidence=evidence).findings}
    after = {f.rule_id for f in engine.score(values, as_of=AS_OF, evidence=evidence).findings}

    assert after - before == {"PROBE-CONTEXT-OVERCLAIMED"}
    assert before <= after


@pytest.mark.parametrize(
    ("version", "example"),
    [
        (V1, "incident-2026-launch.json"),
        (V1, "incident-2026-remediated.json"),
        (V2, "incident-2026-launch-v2.json"),
        (V2, "incident-2026-remediated-v2.json"),
    ],
)
def test_the_incident_fixtures_keep_their_v2_findings_under_v3(catalog, engine, version, example):
    document = json.loads((ROOT / "examples" / example).read_text(encoding="utf-8"))
    values = validate_answers(catalog.questionnaire(version), document["answers"]).values

    v2 = catalog.compiled("incident-2026-kv@2").score(values, as_of=AS_OF)
    v3 = engine.score(values, as_of=AS_OF)

    assert [(f.rule_id, f.severity, f.section, f.evidence) for f in v3.findings] == [
        (f.rule_id, f.severity, f.section, f.evidence) for f in v2.findings
    ]
    assert (v3.risk_score, v3.risk_tier) == (v2.risk_score, v2.risk_tier)
