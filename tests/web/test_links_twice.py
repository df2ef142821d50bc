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


def test_a_double_click_on_send_private_link_emails_one_working_link(
    client, personas, draft, django_capture_on_commit_callbacks
):
    import re

    client.force_login(personas.ava)
    page = client.get(reverse("assessments:detail", args=[draft.pk])).content.decode()
    form = re.search(r'<form method="post" action="[^"]*/invite/".*?</form>', page, re.S).group(0)
    hidden = dict(re.findall(r'<input type="hidden" name="(?!csrf)([^"]+)" value="([^"]*)"', form))
    data = hidden | {"contact_email": "kv-team@cloud-inference.test", "language": "en"}
    url = reverse("assessments:invite", args=[draft.pk])
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(url, data)
        second = client.post(url, data)  # the same form, clicked twice

    assert first.status_code == 302
    assert len(mail.outbox) == 1, "the vendor was emailed twice; the first link is dead"
    assert VendorLink.objects.filter(assessment=draft).count() == 1
    assert second.status_code == 400
    assert "after this page was loaded" in second.content.decode()
