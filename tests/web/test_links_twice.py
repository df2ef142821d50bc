""" "Send a new link" confirmed twice (a double click, the back button and a second click): the
first click replaced the link, so the second is refused instead of replacing the link the
vendor was just emailed — the vendor gets one email, and its link works."""

from __future__ import annotations

from django.contrib.messages import get_messages
from django.core import mail
from django.urls import reverse

from assessments.models import Channel, VendorLink
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import member_of


def test_confirming_send_a_new_link_twice_sends_one_working_link(
    client, personas, draft, django_capture_on_commit_callbacks
):
    first, _token = vendor_link_issue(
        assessment=draft,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
        invitation=False,
    )
    client.force_login(personas.ava)
    url = reverse("assessments:link_reinvite", args=[first.pk])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url)
        second = client.post(url)  # the same confirm form, posted again

    assert len(mail.outbox) == 1, "the vendor was emailed twice; the first link is dead"
    active = VendorLink.objects.filter(assessment=draft, revoked_at__isnull=True)
    assert active.count() == 1
    assert second.status_code == 302
    notices = [str(m) for m in get_messages(second.wsgi_request)]
    assert any("already replaced" in notice for notice in notices), notices
