"""A risk acceptance posted twice (a double click on "Record"): one decision, one audit event,
and so one row in the findings export and one expiry notice per member — not two."""

from __future__ import annotations

from assessments.models import AuditEvent, RiskDecision

from .test_findings import decide


def test_a_double_click_records_one_risk_decision(client, personas, scored):
    client.force_login(personas.ava)
    first = decide(client, scored)
    second = decide(client, scored)  # the same form, posted again

    assert first.status_code == 302
    assert second.status_code == 302  # the decision is recorded: the page says so again
    assert RiskDecision.objects.filter(assessment=scored).count() == 1
    assert AuditEvent.objects.filter(action="risk_decision.acceptance").count() == 1


def test_a_different_decision_on_the_same_finding_is_still_recorded(client, personas, scored):
    client.force_login(personas.ava)
    decide(client, scored)
    decide(client, scored, kind="mitigation", justification="Gateway cap, then the fix.")
    assert RiskDecision.objects.filter(assessment=scored).count() == 2
