"""The portfolio's clock never lies (issue 27, "The clock"): with the clock moved past a
vendor's next-assessment date, it is overdue everywhere (the dashboard's badge, `/?overdue=on`,
the weekly digest, `/portfolio.csv` and .xlsx with a next-assessment column); a rescore ("score
again", a rescore batch) keeps the date, only a new submission moves it; a renewal opened late
says so and keeps the date it was due; and one renewal per vendor and questionnaire is open at
a time."""

from __future__ import annotations

import csv
import datetime as dt
import io
from zoneinfo import ZoneInfo

import openpyxl
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation
from django.utils.formats import date_format

from assessments import factories
from assessments.models import Assessment, AuditEvent, Channel, RenewalReason
from assessments.services.reassessment import renewal_start
from assessments.services.submission import assessment_rescore
from core.errors import ConflictError
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import digest_for, reminders_send
from portfolio.services import rescore_batch_create
from tests.personas import member_of

pytestmark = pytest.mark.django_db

HK = ZoneInfo("Asia/Hong_Kong")
START = dt.datetime(2026, 6, 1, 10, 0, tzinfo=HK)


@pytest.fixture
def scored(catalog, personas, inline_scoring, time_machine):
    """The incident vendor's assessment, scored on 1 June 2026 (its next assessment is then
    due after its tier's days)."""
    time_machine.move_to(START, tick=False)
    with inline_scoring():
        assessment = factories.incident_assessment(member=member_of(personas.ava))
    assessment.refresh_from_db()
    assert assessment.reassess_by is not None and assessment.reassess_by > START.date()
    return assessment


def the_day_after(assessment: Assessment, time_machine) -> dt.date:
    day = assessment.reassess_by + dt.timedelta(days=1)
    time_machine.move_to(dt.datetime.combine(day, dt.time(10, 0), tzinfo=HK), tick=False)
    return day


def member_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_before_the_date_nothing_is_overdue(scored, personas):
    response = member_client(personas.ava).get(reverse("assessments:dashboard"))
    assert response.context["overdue_count"] == 0
    assert not scored.is_overdue


def test_a_passed_next_assessment_date_is_overdue_everywhere(scored, personas, time_machine):
    day = the_day_after(scored, time_machine)
    browser = member_client(personas.ava)

    dashboard = browser.get(reverse("assessments:dashboard"))
    assert dashboard.context["overdue_count"] == 1
    assert "overdue-badge" in dashboard.content.decode()

    only_overdue = browser.get(reverse("assessments:dashboard"), {"overdue": "on"})
    assert [a.pk for a in only_overdue.context["page"]] == [scored.pk]

    digest = digest_for(organization=personas.acme, today=day)
    assert [a.pk for a in digest.overdue] == [scored.pk]
    assert scored.pk not in [a.pk for a in digest.reassessments_due]  # not listed twice

    table = browser.get(reverse("spreadsheets:portfolio_export", args=["csv"]))
    text = b"".join(table.streaming_content).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["Next assessment"] == scored.reassess_by.isoformat()
    assert rows[0]["Overdue"] == "Yes"

    workbook = browser.get(reverse("spreadsheets:portfolio_export", args=["xlsx"]))
    content = b"".join(workbook.streaming_content) if workbook.streaming else workbook.content
    sheet = openpyxl.load_workbook(io.BytesIO(content)).active
    header, first = [list(row) for row in sheet.iter_rows(max_row=2, values_only=True)]
    assert first[header.index("Next assessment")].date() == scored.reassess_by
    assert first[header.index("Overdue")] == "Yes"


def test_score_again_keeps_the_next_assessment_date(scored, personas, time_machine, inline_scoring):
    due = scored.reassess_by
    time_machine.move_to(START + dt.timedelta(days=40), tick=False)
    with inline_scoring():
        assessment_rescore(assessment=scored, member=member_of(personas.ava), channel=Channel.WEB)
    scored.refresh_from_db()
    assert scored.runs.count() == 2  # it did score again
    assert scored.reassess_by == due


def test_a_rescore_batch_keeps_the_next_assessment_date(
    scored, personas, time_machine, inline_scoring
):
    due = scored.reassess_by
    time_machine.move_to(START + dt.timedelta(days=40), tick=False)
    with inline_scoring():
        rescore_batch_create(
            member=member_of(personas.ava), ruleset_key="incident-2026-kv@1", channel=Channel.WEB
        )
    scored.refresh_from_db()
    assert scored.runs.count() == 2
    assert scored.reassess_by == due


def test_a_late_renewal_says_it_is_late_and_keeps_the_date_it_was_due(
    scored, personas, time_machine
):
    due = scored.reassess_by
    the_day_after(scored, time_machine)
    renewal = renewal_start(assessment=scored, reason=RenewalReason.DUE, channel=Channel.SYSTEM)

    assert renewal.due_date == due  # not today + 30 days
    assert renewal.is_overdue
    event = AuditEvent.objects.get(action="assessment.renewal_started")
    assert event.detail["due"] == due.isoformat() and event.detail["late"] is True
    page = member_client(personas.ava).get(reverse("assessments:detail", args=[renewal.pk]))
    assert f"Late since {date_format(due, 'DATE_FORMAT')}" in page.content.decode()
    # The original is no longer counted: its lateness is the renewal's now, until submitted.
    assert member_client(personas.ava).get("/").context["overdue_count"] == 1
    # The vendor is told once that it is late: by the renewal's invitation, not again by the
    # sweep's overdue reminder.
    invitation = OutboundEmail.objects.get(kind=EmailKind.RENEWAL)
    with translation.override("en"):  # emails write dates as the language does (DATE_FORMAT)
        written = date_format(due, "DATE_FORMAT")
    assert f"This reassessment was due on {written}" in invitation.body
    reminders_send()
    assert not OutboundEmail.objects.filter(kind=EmailKind.OVERDUE).exists()


def test_a_renewal_opened_in_time_is_due_on_the_date(scored, personas, time_machine):
    time_machine.move_to(START + dt.timedelta(days=30), tick=False)
    renewal = renewal_start(assessment=scored, reason=RenewalReason.DUE, channel=Channel.SYSTEM)
    assert renewal.due_date == scored.reassess_by
    assert not renewal.is_overdue


def test_a_second_renewal_of_a_vendor_and_questionnaire_is_refused(
    scored, personas, inline_scoring
):
    ava = member_of(personas.ava)
    with inline_scoring():
        second = factories.incident_assessment(member=ava, vendor=scored.vendor)
    first_renewal = renewal_start(
        assessment=scored, reason=RenewalReason.DUE, channel=Channel.WEB, member=ava
    )

    response = member_client(personas.ava).post(
        reverse("portfolio:reassess", args=[second.pk]), follow=True
    )

    text = response.content.decode()
    assert f"A reassessment of this vendor is already open (assessment {first_renewal.pk})" in text
    assert Assessment.objects.filter(renewal_of__isnull=False).count() == 1
    with pytest.raises(ConflictError):
        renewal_start(assessment=second, reason=RenewalReason.DUE, channel=Channel.WEB, member=ava)
