"""A member's notifications: the unread count in the header, the list, opening one (marked
read, then its page), marking all read, the choices page; another member's is a 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from notifications.models import Notification, NotificationEvent
from notifications.services import notify, preferences_of

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def two_for_ava(personas):
    for number in (1, 2):
        notify(
            organization=personas.acme,
            event=NotificationEvent.SUBMITTED,
            key=f"submitted:test:{number}",
            recipients=[personas.ava],
            words={"vendor": f"Vendor {number}"},
            path=reverse("assessments:dashboard"),
        )
    return list(Notification.objects.filter(recipient=personas.ava).order_by("pk"))


def test_the_header_counts_the_unread_and_the_list_shows_them(personas, two_for_ava):
    page = signed_in(personas.ava).get(reverse("notifications:list")).content.decode()

    assert 'class="badge unread-badge">2<span class="visually-hidden"> unread</span>' in page
    assert "Vendor 1 submitted its answers: ready for review" in page


def test_opening_one_marks_it_read_and_goes_to_its_page(personas, two_for_ava):
    ava = signed_in(personas.ava)
    first = two_for_ava[0]

    response = ava.get(reverse("notifications:open", args=[first.pk]))

    assert response.status_code == 302 and response["Location"] == reverse("assessments:dashboard")
    first.refresh_from_db()
    assert first.read_at is not None
    page = ava.get(reverse("notifications:list")).content.decode()
    assert 'class="badge unread-badge">1<span' in page


def test_mark_all_read(personas, two_for_ava):
    signed_in(personas.ava).post(reverse("notifications:read_all"))

    assert not Notification.objects.filter(read_at__isnull=True).exists()


def test_another_members_notification_is_not_found(personas, two_for_ava):
    rex = signed_in(personas.rex)

    assert rex.get(reverse("notifications:open", args=[two_for_ava[0].pk])).status_code == 404
    two_for_ava[0].refresh_from_db()
    assert two_for_ava[0].read_at is None


def test_a_member_chooses_what_they_are_told(personas):
    rex = signed_in(personas.rex)
    assert rex.get(reverse("notifications:settings")).status_code == 200

    rex.post(
        reverse("notifications:settings"),
        {"submitted__in_app": "on", "signed_off__email": "on"},
    )

    choices = preferences_of(personas.rex)
    assert choices[NotificationEvent.SUBMITTED] == (True, False)
    assert choices[NotificationEvent.SIGNED_OFF] == (False, True)
    assert choices[NotificationEvent.TIER_CHANGED] == (False, False)
