"""A vendor link a member revoked stays revoked: AVIA's own emails (reminders, changes
requested, a reassessment) never hand that contact a fresh link behind the member's back."""

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from assessments.factories import VENDOR_CONTACT, incident_assessment
from assessments.models import Channel, VendorLink
from assessments.services.vendor_links import vendor_link_issue
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import reminders_send
from tests.personas import member_of

GONE = "left-the-company@vendor.test"


def _revoke_through_the_page(personas, link: VendorLink) -> None:
    client = Client()
    client.force_login(personas.ava)
    response = client.post(reverse("assessments:link_revoke", args=[link.pk]))
    assert response.status_code == 302
    link.refresh_from_db()
    assert link.state == "revoked"


def _active_links_to(assessment, email: str) -> list[VendorLink]:
    return [
        link
        for link in VendorLink.objects.filter(assessment=assessment, contact_email__iexact=email)
        if link.is_active
    ]


@pytest.mark.django_db
def test_a_reminder_does_not_reissue_a_link_the_assessor_revoked(catalog, personas):
    ava = member_of(personas.ava)
    today = timezone.localdate()
    assessment = incident_assessment(
        member=ava, submit=False, due_date=today + dt.timedelta(days=2)
    )
    link, _token = vendor_link_issue(
        assessment=assessment, contact_email=GONE, member=ava, channel=Channel.WEB
    )
    _revoke_through_the_page(personas, link)

    reminders_send(today=today)

    assert _active_links_to(assessment, GONE) == []
    assert not OutboundEmail.objects.filter(
        to_address=GONE, kind__in=[EmailKind.DUE_SOON, EmailKind.OVERDUE]
    ).exists()


@pytest.mark.django_db
def test_a_reminder_still_goes_to_a_contact_whose_link_was_only_replaced(catalog, personas):
    ava = member_of(personas.ava)
    today = timezone.localdate()
    assessment = incident_assessment(
        member=ava, submit=False, due_date=today + dt.timedelta(days=2)
    )
    vendor_link_issue(assessment=assessment, contact_email=GONE, member=ava, channel=Channel.WEB)
    vendor_link_issue(assessment=assessment, contact_email=GONE, member=ava, channel=Channel.WEB)

    reminders_send(today=today)

    assert OutboundEmail.objects.filter(to_address=GONE, kind=EmailKind.DUE_SOON).exists()


@pytest.mark.django_db
def test_changes_requested_does_not_reissue_a_revoked_link(catalog, personas, client_as):
    ava = member_of(personas.ava)
    assessment = incident_assessment(member=ava, through_link=True)
    (link,) = VendorLink.objects.filter(assessment=assessment)
    _revoke_through_the_page(personas, link)

    response = client_as(personas.rex).post(
        f"/api/v1/assessments/{assessment.pk}/review/",
        {"decision": "changes_requested", "message": "Recheck", "reopen_codes": ["CTX-01"]},
        format="json",
    )

    assert response.status_code == 201
    assert _active_links_to(assessment, VENDOR_CONTACT) == []
    assert not OutboundEmail.objects.filter(
        to_address=VENDOR_CONTACT, kind=EmailKind.CHANGES_REQUESTED
    ).exists()
