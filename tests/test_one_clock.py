"""One clock: every time a reader sees — on a page, in the PDF, in an email — is in the
organization's time zone (default Asia/Hong_Kong), in the one date format of the language."""

import datetime as dt

import pytest
from django.core import mail
from django.test import TestCase
from django.urls import reverse

from assessments.models import Channel, VendorLink
from assessments.services.vendor_links import vendor_link_issue
from reports.context import report_context
from tests.personas import member_of
from tests.web.conftest import make_draft, make_scored

pytestmark = pytest.mark.django_db

LATE_EVENING_UTC = dt.datetime(2026, 1, 1, 20, 30, tzinfo=dt.UTC)  # 04:30 next day in HK


def draft_with_a_link_sent_late_in_the_evening(personas):
    """A draft whose vendor link was made at LATE_EVENING_UTC (shown on its page)."""
    assessment = make_draft(personas)
    vendor_link_issue(
        assessment=assessment,
        contact_email="kv@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    VendorLink.objects.update(created_at=LATE_EVENING_UTC)
    return assessment


def test_organizations_start_on_hong_kong_time(personas):
    assert personas.acme.time_zone == "Asia/Hong_Kong"


@pytest.mark.parametrize(
    ("zone", "english", "chinese"),
    [
        ("Asia/Hong_Kong", "2 Jan 2026, 04:30", "2026年1月2日 04:30"),
        ("Europe/London", "1 Jan 2026, 20:30", "2026年1月1日 20:30"),
    ],
)
def test_a_page_shows_times_in_the_organizations_zone_and_languages_format(
    client, catalog, personas, zone, english, chinese
):
    personas.acme.time_zone = zone
    personas.acme.save(update_fields=["time_zone"])
    assessment = draft_with_a_link_sent_late_in_the_evening(personas)
    client.force_login(personas.ava)
    url = reverse("assessments:detail", args=[assessment.pk])
    assert english in client.get(url).content.decode()
    client.cookies["django_language"] = "zh-hant"
    assert chinese in client.get(url).content.decode()


def test_the_report_is_dated_on_the_organizations_clock(catalog, personas):
    personas.acme.time_zone = "Europe/London"
    personas.acme.save(update_fields=["time_zone"])
    scored = make_scored(personas)
    context = report_context(
        run=scored.latest_run, language="en", number="X", generated_at=LATE_EVENING_UTC
    )
    assert (context.generated_on, context.generated_at) == ("1 Jan 2026", "1 Jan 2026, 20:30")
    assert context.generated_at_iso == "2026-01-01T20:30:00+00:00"


def test_the_invitation_dates_the_link_on_the_organizations_clock(catalog, personas):
    assessment = make_draft(personas)
    mail.outbox.clear()
    with TestCase.captureOnCommitCallbacks(execute=True):
        link, _token = vendor_link_issue(
            assessment=assessment,
            contact_email="kv@vendor.test",
            member=member_of(personas.ava),
            channel=Channel.WEB,
            language="zh-hant",
        )
    from core.formats import format_date

    expires = format_date(link.expires_at, "zh-hant", zone="Asia/Hong_Kong")
    assert f"有效期至 {expires}" in mail.outbox[0].body


def test_an_owner_sets_the_organizations_time_zone_on_its_settings_page(client, catalog, personas):
    """The branding page sets the clock; an unknown zone is refused by name and nothing is
    saved."""
    assessment = draft_with_a_link_sent_late_in_the_evening(personas)
    client.force_login(personas.alice)
    page = reverse("accounts:branding", args=[personas.acme.slug])
    fields = {"report_display_name": "", "brand_colour": ""}
    refused = client.post(page, {**fields, "time_zone": "Mars/Olympus_Mons"})
    assert refused.status_code == 400
    assert "Mars/Olympus_Mons" in refused.content.decode()
    personas.acme.refresh_from_db()
    assert personas.acme.time_zone == "Asia/Hong_Kong"
    assert client.post(page, {**fields, "time_zone": "Europe/London"}).status_code == 302
    personas.acme.refresh_from_db()
    assert personas.acme.time_zone == "Europe/London"
    detail = client.get(reverse("assessments:detail", args=[assessment.pk])).content.decode()
    assert "1 Jan 2026, 20:30" in detail
