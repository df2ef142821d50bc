"""The reminder sweep reads "overdue" on the organization's clock, as its dashboard does: a
vendor is not told its due date has passed while it is still that day for the buyer."""

import datetime as dt

import pytest
from django.urls import reverse

from assessments.models import Channel
from assessments.services.vendor_links import vendor_link_issue
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import reminders_send
from tests.personas import member_of
from tests.web.conftest import make_draft

pytestmark = pytest.mark.django_db

ZONE = "America/New_York"
DUE = dt.date(2026, 12, 3)
# 22:00 on 3 December in New York: the server (Hong Kong) is already on 4 December.
EVENING_OF_THE_DUE_DATE = dt.datetime(2026, 12, 4, 3, 0, tzinfo=dt.UTC)
# 01:00 on 4 December in New York: now it has passed.
AFTER_MIDNIGHT = dt.datetime(2026, 12, 4, 6, 0, tzinfo=dt.UTC)


def test_the_overdue_reminder_waits_for_the_organizations_midnight(
    catalog, personas, client, time_machine
):
    personas.acme.time_zone = ZONE
    personas.acme.save(update_fields=["time_zone"])
    time_machine.move_to(dt.datetime(2026, 11, 1, tzinfo=dt.UTC), tick=False)
    assessment = make_draft(personas, due_date=DUE)
    vendor_link_issue(
        assessment=assessment,
        contact_email="kv@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )

    time_machine.move_to(EVENING_OF_THE_DUE_DATE, tick=False)
    client.force_login(personas.ava)
    assert client.get(reverse("assessments:dashboard")).context["overdue_count"] == 0
    reminders_send()
    assert not OutboundEmail.objects.filter(kind=EmailKind.OVERDUE).exists()

    time_machine.move_to(AFTER_MIDNIGHT, tick=False)
    assert client.get(reverse("assessments:dashboard")).context["overdue_count"] == 1
    reminders_send()
    assert OutboundEmail.objects.filter(kind=EmailKind.OVERDUE).count() == 1
