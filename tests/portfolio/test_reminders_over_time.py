"""A frozen clock walks an assessment through a year of reassessment: due, the reassessment
opened, the reminder, overdue (with a fresh link), the renewal confirmed and approved; and a
risk acceptance through its expiry. Each email leaves exactly once, in the vendor's language.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.db import transaction

from assessments.factories import VENDOR_NAME, critical_rule_ids
from assessments.models import (
    DEFAULT_REASSESSMENT_DAYS,
    Assessment,
    AssessmentStatus,
    Channel,
    RenewalReason,
    ReviewDecision,
    RiskDecisionKind,
)
from assessments.services.answers import answer_values, answers_save
from assessments.services.reviews import review_record, risk_decision_record
from assessments.services.scoring_runs import scoring_run_execute
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_resolve
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import reminders_send
from tests.personas import member_of

from .conftest import answer_file, answered_by_mei

HK = ZoneInfo("Asia/Hong_Kong")
START = dt.datetime(2027, 1, 4, 9, 0, tzinfo=HK)  # a Monday
CJK = re.compile(r"[\u4e00-\u9fff]")
TOKEN = re.compile(r"/v/([\w-]+)/")


def on_day(day: int) -> dt.datetime:
    return START + dt.timedelta(days=day)


@pytest.fixture
def clock(time_machine):
    time_machine.move_to(START, tick=False)
    return lambda day: time_machine.move_to(on_day(day), tick=False)


@pytest.fixture
def sweep(clock, django_capture_on_commit_callbacks):
    """`sweep(day)`: the beat task on that day; returns the emails it sent."""

    def run(day: int) -> list:
        clock(day)
        before = len(mail.outbox)
        with django_capture_on_commit_callbacks(execute=True):
            reminders_send()
        return mail.outbox[before:]

    return run


def vendor_emails(kind):
    return list(OutboundEmail.objects.filter(kind=kind, to_address="mei@inferno.test"))


def approved_assessment(personas, django_capture_on_commit_callbacks):
    """The incident vendor answered by Mei (in Traditional Chinese), scored, approved."""
    assessment = answered_by_mei(personas, django_capture_on_commit_callbacks, startup_log=False)
    review_record(
        assessment=assessment,
        member=member_of(personas.rex),
        decision=ReviewDecision.APPROVED_WITH_CONDITIONS,
        conditions="Re-run the isolation probe every quarter.",
        acknowledged_findings=critical_rule_ids(assessment),
        channel=Channel.WEB,
    )
    return Assessment.objects.get(pk=assessment.pk)


def test_a_year_of_reassessment_sends_each_email_once_in_the_vendors_language(
    catalog, personas, clock, sweep, django_capture_on_commit_callbacks
):
    original = approved_assessment(personas, django_capture_on_commit_callbacks)
    days = DEFAULT_REASSESSMENT_DAYS[original.risk_tier]
    assert original.status == AssessmentStatus.APPROVED
    assert original.reassess_by == START.date() + dt.timedelta(days=days)
    due_day = days  # the day the vendor is due again
    acceptance = risk_decision_record(
        assessment=original,
        rule_id=original.latest_run.findings.first().rule_id,
        kind=RiskDecisionKind.ACCEPTANCE,
        justification="Dedicated pool ordered; accepted until it is live.",
        owner="CISO",
        expires_on=START.date() + dt.timedelta(days=40),
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )

    # -- the risk acceptance: announced once before it expires, once when it has -------------
    assert not any(e.subject.startswith("Risk") for e in sweep(25))
    expiring = [e for e in sweep(26) if e.subject.startswith("Risk acceptance expires")]
    assert [e.to for e in expiring] == [["ava@acme.test"]]
    assert "13 Feb 2027" in expiring[0].subject and acceptance.rule_id in expiring[0].subject
    assert not any(e.subject.startswith("Risk") for e in sweep(27) + sweep(39))
    expired = [e for e in sweep(40) if e.subject.startswith("Risk acceptance expired")]
    assert [e.to for e in expired] == [["ava@acme.test"]]
    assert not any(e.subject.startswith("Risk") for e in sweep(41))

    # -- due: the reassessment opens RENEWAL_NOTICE_DAYS before, with the last answers --------
    assert not [e for e in sweep(due_day - 31) if e.to == ["mei@inferno.test"]]
    assert not original.renewals.exists()
    opened = [e for e in sweep(due_day - 30) if e.to == ["mei@inferno.test"]]
    renewal = original.renewals.get()
    assert (renewal.renewal_reason, renewal.status) == (RenewalReason.DUE, AssessmentStatus.SENT)
    assert renewal.due_date == original.reassess_by
    assert renewal.questionnaire.key == "ai-inference-isolation@3"  # the newest version
    assert answer_values(renewal) == answer_values(original)
    assert len(opened) == 1 and CJK.search(opened[0].subject) and CJK.search(opened[0].body)
    first_token = TOKEN.search(opened[0].body).group(1)
    assert vendor_link_resolve(token=first_token).assessment == renewal
    assert [e for e in sweep(due_day - 30) if e.to == ["mei@inferno.test"]] == []
    assert original.renewals.count() == 1

    # -- the reminder before the due date: the link still works, so no new one ---------------
    assert [e for e in sweep(due_day - 8) if e.to == ["mei@inferno.test"]] == []
    reminded = [e for e in sweep(due_day - 7) if e.to == ["mei@inferno.test"]]
    assert len(reminded) == 1 and CJK.search(reminded[0].subject)
    assert TOKEN.search(reminded[0].body) is None
    assert [e for e in sweep(due_day - 1) if e.to == ["mei@inferno.test"]] == []

    # -- overdue: the first link expired (VENDOR_LINK_DAYS), so a fresh one -------------------
    overdue = [e for e in sweep(due_day + 1) if e.to == ["mei@inferno.test"]]
    assert len(overdue) == 1 and CJK.search(overdue[0].subject)
    assert vendor_link_resolve(token=first_token) is None
    fresh_token = TOKEN.search(overdue[0].body).group(1)
    fresh = vendor_link_resolve(token=fresh_token)
    assert fresh.assessment == renewal and fresh.language == "zh-hant"
    assert [e for e in sweep(due_day + 2) if e.to == ["mei@inferno.test"]] == []

    # -- renewal: Mei confirms the answers, answers what the newer questionnaire added, and the
    # renewal is scored and approved ----------------------------------------------------------
    new_in_v3 = {
        code: value
        for code, value in answer_file("incident-2026-launch-v2").items()
        if code not in answer_values(original)
    } | {"KV-10": "salt_set_by_gateway"}  # v3 asks it: the prefix cache is per tenant (KV-05)
    answers_save(
        assessment=renewal, answers=new_in_v3, vendor_link=fresh, channel=Channel.VENDOR_LINK
    )
    with transaction.atomic():
        run = assessment_submit(assessment=renewal, vendor_link=fresh, channel=Channel.VENDOR_LINK)
    scoring_run_execute(run_id=run.pk)
    review_record(
        assessment=renewal,
        member=member_of(personas.rex),
        decision="approved",
        acknowledged_findings=critical_rule_ids(renewal),
        channel=Channel.WEB,
    )
    renewal.refresh_from_db()
    assert renewal.reassess_by == on_day(due_day + 2).date() + dt.timedelta(
        days=DEFAULT_REASSESSMENT_DAYS[renewal.risk_tier]
    )
    assert [e for e in sweep(due_day + 3) if e.to == ["mei@inferno.test"]] == []

    # Every email of the year, once each.
    for kind in (EmailKind.RENEWAL, EmailKind.DUE_SOON, EmailKind.OVERDUE):
        (email,) = vendor_emails(kind)
        assert email.language == "zh-hant" and email.status == "sent"
    for kind in (EmailKind.RISK_ACCEPTANCE_EXPIRING, EmailKind.RISK_ACCEPTANCE_EXPIRED):
        assert OutboundEmail.objects.filter(kind=kind).count() == 1


def test_the_weekly_digest_goes_to_assessors_once_a_week(
    catalog, personas, sweep, django_capture_on_commit_callbacks
):
    approved_assessment(personas, django_capture_on_commit_callbacks)
    due = Assessment.objects.get().reassess_by
    days_to_due = (due - START.date()).days
    # Nothing to report a long way before anything is due.
    assert not [e for e in sweep(0) if "Your week" in e.subject]
    # Within the horizon (DIGEST_HORIZON_DAYS before the reassessment is due), in the first
    # full week: one digest per assessing member (owner, assessor), not the others.
    week_day = days_to_due - 29 - (START + dt.timedelta(days=days_to_due - 29)).weekday()
    first = [e for e in sweep(week_day + 7) if "Your week" in e.subject]
    assert sorted(e.to[0] for e in first) == ["alice@acme.test", "ava@acme.test"]
    assert VENDOR_NAME in first[0].body
    assert not [e for e in sweep(week_day + 8) if "Your week" in e.subject]  # same week
    assert len([e for e in sweep(week_day + 14) if "Your week" in e.subject]) == 2  # next week
