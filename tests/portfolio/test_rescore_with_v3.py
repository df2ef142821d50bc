"""Ruleset v3 rescores v1 and v2 assessments as one batch (v3.md): a v2 assessment whose probe
result says `overclaimed` gains PROBE-CONTEXT-OVERCLAIMED; neither version gains a CACHE-* rule
(the questions they read are v3's). The results after are what the engine gives."""

from __future__ import annotations

import pytest
from django.urls import reverse

from assessments.factories import OVERCLAIMED_PROBE
from assessments.models import Assessment
from assessments.services.answers import answer_values
from portfolio.models import BatchStatus, RescoreBatch
from portfolio.selectors import batch_changes
from scoring.evidence import parse_evidence
from scoring.registry import builtin_catalog

from .conftest import V1, V2, V3, scored_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def older(catalog, personas):
    """Acme's assessments scored before v3: one of v1 (launch day), two of v2 (one with a probe
    result that found the declared context over-claimed)."""
    made = {}
    for name, ruleset, fixture, evidence in (
        ("Inferno AI", V1, "incident-2026-launch", ()),
        ("Long Context Co", V2, "incident-2026-remediated-v2", [("PRB-02", OVERCLAIMED_PROBE)]),
        ("Blue Harbour Compute", V2, "incident-2026-remediated-v2", ()),
    ):
        made[name] = scored_with(
            ruleset,
            organization=personas.acme,
            actor=personas.ava,
            vendor_name=name,
            fixture=fixture,
            evidence=evidence,
        )
    return made


def engine_result(assessment: Assessment, evidence: dict) -> tuple[int, str, set[str]]:
    result = (
        builtin_catalog()
        .compiled(V3)
        .score(answer_values(assessment), as_of=assessment.latest_run.as_of, evidence=evidence)
    )
    return result.risk_score, result.risk_tier, {f.rule_id for f in result.findings}


def test_v1_and_v2_assessments_rescored_with_v3_as_one_batch(
    client, personas, older, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client.force_login(personas.ava)
    page = client.get(reverse("portfolio:rescore"))
    assert page.context["ruleset"].key == V3  # offered first: the newest
    assert {a.pk for a in page.context["page"]} == {a.pk for a in older.values()}

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("portfolio:rescore"), {"ruleset": V3})

    batch = RescoreBatch.objects.get()
    assert (batch.status, batch.total) == (BatchStatus.DONE, 3)
    changes = {change.vendor: change for change in batch_changes(batch=batch)}
    assert {c.after.ruleset for c in changes.values()} == {V3}
    assert changes["Long Context Co"].added == ["PROBE-CONTEXT-OVERCLAIMED"]
    assert changes["Long Context Co"].removed == []
    for change in changes.values():
        assert not [rule for rule in change.added if rule.startswith("CACHE-")]
    assert changes["Blue Harbour Compute"].added == []
    # v1 answers gain only v2's rule that reads "PRB-01 or blank" (confidential data, no probe).
    assert changes["Inferno AI"].added == ["PROBE-NOT-RUN"]
    probe = {"PRB-02": [parse_evidence(OVERCLAIMED_PROBE, parser="probe_result")]}
    for name, assessment in older.items():
        assessment.refresh_from_db()
        run = assessment.latest_run
        fired = set(run.findings.values_list("rule_id", flat=True))
        assert (run.risk_score, run.risk_tier, fired) == engine_result(
            assessment, probe if name == "Long Context Co" else {}
        )
