"""The events that real changes cause, each written once per subscribed endpoint, with the
payload the OpenAPI schema documents: a vendor submits, the worker scores, a reviewer signs
off, a report is rendered, a rescore batch ends, a risk acceptance nears its expiry."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from assessments import factories
from assessments.factories import critical_rule_ids
from assessments.models import Channel
from assessments.services.reviews import review_record, risk_decision_record
from portfolio.reminders import reminders_send
from portfolio.services import rescore_batch_create, rescore_batch_settle
from reports.services import report_render, report_request
from tests.personas import member_of
from webhooks import schema
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db


def delivered(event: str) -> list[dict]:
    """The payloads written for `event`, each checked against its documented schema."""
    payloads = [
        {"id": delivery.pk, **delivery.payload}
        for delivery in WebhookDelivery.objects.filter(event=event).order_by("pk")
    ]
    for payload in payloads:
        documented = schema.PAYLOADS[event](data=payload)
        assert documented.is_valid(), (event, documented.errors)
    return payloads


@pytest.fixture
def scored(catalog, personas, endpoint, inline_scoring):
    with inline_scoring():
        return factories.incident_assessment(member=member_of(personas.ava))


def test_submitting_and_scoring_tell_the_endpoint(scored):
    (submitted,) = delivered("assessment.submitted")
    (done,) = delivered("assessment.scored")

    assert submitted["data"]["assessment"]["id"] == scored.pk == done["data"]["assessment"]["id"]
    assert submitted["data"]["assessment"]["vendor"]["name"] == scored.vendor.name
    run = scored.latest_run
    assert done["data"]["run"] == {
        "id": run.pk,
        "ruleset": run.ruleset.key,
        "risk_score": run.risk_score,
        "risk_tier": run.risk_tier,
    }
    assert done["data"]["assessment"]["url"].endswith(f"/assessments/{scored.pk}/")


def test_a_sign_off_tells_the_endpoint_and_a_request_for_changes_does_not(scored, personas):
    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Prompts under 128,000 tokens only.",
        acknowledged_findings=critical_rule_ids(scored),
        channel=Channel.WEB,
    )

    (signed,) = delivered("assessment.signed_off")
    assert signed["data"]["review"] == {
        "decision": "approved_with_conditions",
        "conditions": "Prompts under 128,000 tokens only.",
    }
    assert signed["data"]["assessment"]["status"] == "approved"


def test_a_rendered_report_tells_the_endpoint(scored, personas, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        report = report_request(
            assessment=scored, member=member_of(personas.ava), language="en", channel=Channel.WEB
        )
    report_render(report_id=report.pk)
    report.refresh_from_db()

    (ready,) = delivered("report.ready")
    assert ready["data"]["report"]["sha256"] == report.sha256
    assert ready["data"]["report"]["number"] == report.number


def test_a_finished_rescore_batch_tells_the_endpoint_once(scored, personas, inline_scoring):
    with inline_scoring():
        batch = rescore_batch_create(
            member=member_of(personas.ava),
            ruleset_key=scored.latest_run.ruleset.key,
            channel=Channel.API,
            assessment_ids=[scored.pk],
        )
    rescore_batch_settle(batch_id=batch.pk)  # again: already settled, no second event

    (finished,) = delivered("rescore_batch.finished")
    assert finished["data"]["rescore_batch"]["id"] == batch.pk
    assert finished["data"]["rescore_batch"]["total"] == 1


def test_a_risk_acceptance_near_its_expiry_tells_the_endpoint_once(scored, personas):
    finding = scored.latest_run.findings.order_by("pk").first()
    expires = dt.date(2027, 3, 1)
    risk_decision_record(
        assessment=scored,
        rule_id=finding.rule_id,
        kind="acceptance",
        justification="Accepted until the upgrade.",
        owner="CISO",
        expires_on=expires,
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    with time_machine.travel(dt.datetime(2027, 2, 20, 9, tzinfo=dt.UTC)):
        reminders_send()
        reminders_send()

    (expiring,) = delivered("risk_acceptance.expiring")
    assert expiring["data"]["risk_acceptance"]["rule_id"] == finding.rule_id
    assert expiring["data"]["risk_acceptance"]["expires_on"] == "2027-03-01"
