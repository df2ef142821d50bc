"""Who is told of what, once per event, in their language, as they chose: a vendor submits
(the assessor and the reviewers), a rescore changes the tier (the assessor), the vendor answers
requested changes (the assessor and the reviewer who asked), a reviewer signs off (the
assessor), a vendor declares a configuration change (the assessor and the owners), a risk
acceptance nears its end (who recorded it)."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.utils import translation

from assessments import factories
from assessments.factories import critical_rule_ids
from assessments.models import Assessment, Channel, ReviewDecision, VendorLink
from assessments.services.reassessment import renewal_start
from assessments.services.reviews import review_record, risk_decision_record
from assessments.services.scoring_runs import scoring_run_execute
from assessments.services.submission import assessment_rescore
from notifications.models import Notification, NotificationEvent
from notifications.services import preferences_save
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import reminders_send
from tests.personas import member_of

pytestmark = pytest.mark.django_db


def told(event: str) -> dict[str, str]:
    """{recipient's email: title} of the notifications written for `event`."""
    return {
        n.recipient.email: n.title
        for n in Notification.objects.filter(event=event).select_related("recipient")
    }


def emailed() -> dict[str, str]:
    return {
        email.to_address: email.subject
        for email in OutboundEmail.objects.filter(kind=EmailKind.NOTIFICATION)
    }


@pytest.fixture
def submitted(catalog, personas):
    """Ava's assessment of the incident vendor, submitted by the vendor through its link."""
    return factories.incident_assessment(member=member_of(personas.ava), through_link=True)


def test_a_vendors_submission_tells_the_assessor_and_the_reviewers_in_their_language(
    catalog, personas
):
    personas.rex.preferred_language = "zh-hant"
    personas.rex.save(update_fields=["preferred_language"])

    assessment = factories.incident_assessment(member=member_of(personas.ava), through_link=True)

    vendor = assessment.vendor.name
    titles = told(NotificationEvent.SUBMITTED)
    # Ava created it; Rex reviews; Alice owns (owners may review); Vic only reads.
    assert set(titles) == {"ava@acme.test", "rex@acme.test", "alice@acme.test"}
    assert titles["ava@acme.test"] == f"{vendor} submitted its answers: ready for review"
    assert titles["rex@acme.test"] == f"{vendor} 已提交答案：可供審閱"
    assert emailed()["rex@acme.test"] == titles["rex@acme.test"]
    body = OutboundEmail.objects.get(kind=EmailKind.NOTIFICATION, to_address="rex@acme.test").body
    assert f"/assessments/{assessment.pk}/" in body and "/notifications/settings/" in body


def test_the_member_who_submits_is_not_told_of_their_own_submission(catalog, personas):
    factories.incident_assessment(member=member_of(personas.ava))

    assert "ava@acme.test" not in told(NotificationEvent.SUBMITTED)


def test_each_member_is_told_once_and_as_they_chose(catalog, personas):
    preferences_save(user=personas.rex, choices={NotificationEvent.SUBMITTED: (True, False)})
    preferences_save(user=personas.alice, choices={NotificationEvent.SUBMITTED: (False, False)})

    assessment = factories.incident_assessment(member=member_of(personas.ava), through_link=True)
    from assessments.services.notices import notify_submitted

    notify_submitted(  # the same event again: a retried cause
        assessment=assessment, run=assessment.latest_run, submitter=None, answering_changes=False
    )

    assert sorted(told(NotificationEvent.SUBMITTED)) == ["ava@acme.test", "rex@acme.test"]
    assert sorted(emailed()) == ["ava@acme.test"]
    assert Notification.objects.filter(event=NotificationEvent.SUBMITTED).count() == 2


def test_a_rescore_tells_the_assessor_only_when_the_tier_changes(submitted, personas):
    ava = member_of(personas.ava)
    again = assessment_rescore(assessment=submitted, member=ava, channel=Channel.WEB)
    scoring_run_execute(run_id=again.pk)
    assert told(NotificationEvent.TIER_CHANGED) == {}  # the same tier

    Assessment.objects.filter(pk=submitted.pk).update(risk_tier="low")
    submitted.refresh_from_db()
    third = assessment_rescore(assessment=submitted, member=ava, channel=Channel.WEB)
    scoring_run_execute(run_id=third.pk)

    assert told(NotificationEvent.TIER_CHANGED) == {
        "ava@acme.test": f"{submitted.vendor.name} is now Critical risk (was Low)"
    }


def test_answered_changes_tell_the_assessor_and_the_reviewer_who_asked(submitted, personas):
    review_record(
        assessment=submitted,
        member=member_of(personas.rex),
        decision="changes_requested",
        message="Send the decode node's log too.",
        reopen_codes=["CTX-08"],
        channel=Channel.WEB,
    )
    Notification.objects.all().delete()
    link = VendorLink.objects.filter(assessment=submitted).latest("pk")  # the one emailed last

    factories.submit_and_score(submitted, vendor_link=link, channel=Channel.VENDOR_LINK)

    assert set(told(NotificationEvent.CHANGES_ANSWERED)) == {"ava@acme.test", "rex@acme.test"}
    assert told(NotificationEvent.SUBMITTED) == {}


def test_a_sign_off_tells_the_assessor_with_the_decision(submitted, personas):
    personas.ava.preferred_language = "zh-hant"
    personas.ava.save(update_fields=["preferred_language"])

    review_record(
        assessment=submitted,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Short prompts only.",
        acknowledged_findings=critical_rule_ids(submitted),
        channel=Channel.WEB,
    )

    (title,) = told(NotificationEvent.SIGNED_OFF).values()
    with translation.override("zh-hant"):
        decision = str(ReviewDecision.APPROVED_WITH_CONDITIONS.label)
    assert decision != "Approved with conditions"
    assert title == f"{submitted.vendor.name}：rex@acme.test {decision}"


def test_a_declared_configuration_change_tells_the_assessor_and_the_owners(submitted, personas):
    link = VendorLink.objects.filter(assessment=submitted).latest("pk")

    renewal_start(
        assessment=submitted,
        reason="configuration_change",
        channel=Channel.VENDOR_LINK,
        vendor_link=link,
        changes=["quantization", "memory"],
    )

    titles = told(NotificationEvent.CONFIGURATION_CHANGE)
    assert set(titles) == {"ava@acme.test", "alice@acme.test"}
    assert titles["ava@acme.test"].endswith(
        "declared a configuration change: Quantization, GPU memory or KV-cache settings"
    )


def test_a_risk_acceptance_near_its_end_is_told_once_in_the_app_and_once_by_email(
    submitted, personas
):
    finding = submitted.latest_run.findings.order_by("pk").first()
    risk_decision_record(
        assessment=submitted,
        rule_id=finding.rule_id,
        kind="acceptance",
        justification="Until the upgrade.",
        owner="CISO",
        expires_on=dt.date(2027, 3, 1),
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    OutboundEmail.objects.all().delete()  # the submission's
    with time_machine.travel(dt.datetime(2027, 2, 20, 9, tzinfo=dt.UTC)):
        reminders_send()
        reminders_send()

    assert list(told(NotificationEvent.RISK_ACCEPTANCE_EXPIRING)) == ["ava@acme.test"]
    expiring = OutboundEmail.objects.filter(to_address="ava@acme.test").exclude(
        kind=EmailKind.NOTIFICATION
    )
    assert expiring.filter(kind=EmailKind.RISK_ACCEPTANCE_EXPIRING).count() == 1
    assert not OutboundEmail.objects.filter(kind=EmailKind.NOTIFICATION).exists()
