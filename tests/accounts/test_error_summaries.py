"""A refused form on an account page opens with the site's error summary, as every other form
page does: it takes the focus when the page loads (so a screen-reader or keyboard user lands on
it) and links each message to its field."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import Membership

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]

SLUG = "acme-procurement"
LINK = re.compile(r"https?://[^/\s]+(/accounts/[\w/-]+/)")


def summary_of(response) -> str:
    """The error summary of the page, which must take the focus when the page loads."""
    body = response.content.decode()
    match = re.search(r'<div class="error-summary"[^>]*>(.*?)</div>', body, re.S)
    assert match, "no error summary on the page"
    opening = match.group(0).split(">", 1)[0]
    assert 'tabindex="-1"' in opening, opening
    # the browser focuses the first element marked autofocus: the summary, not a field
    assert match.start() < body.find("autofocus") < match.start() + len(opening), opening
    return match.group(1)


@pytest.fixture
def owner(client, personas):
    client.force_login(personas.alice)
    return client


def test_adding_a_member_without_an_address_shows_the_summary(owner):
    response = owner.post(reverse("accounts:members", args=[SLUG]), {"email": "", "role": "viewer"})
    assert response.status_code == 400
    assert 'href="#id_email"' in summary_of(response)


def test_a_refused_role_change_shows_the_summary(owner, personas):
    alice = Membership.objects.get(user=personas.alice, organization=personas.acme)
    response = owner.post(
        reverse("accounts:member_change_role", args=[SLUG, alice.pk]), {"role": "viewer"}
    )
    assert response.status_code == 400
    assert "last owner" in summary_of(response)


def test_a_bad_brand_colour_shows_the_summary(owner):
    response = owner.post(
        reverse("accounts:branding", args=[SLUG]),
        {"report_display_name": "Acme", "brand_colour": "red"},
    )
    assert response.status_code == 400
    assert 'href="#id_brand_colour"' in summary_of(response)


def test_a_token_name_too_long_shows_the_summary(owner):
    response = owner.post(reverse("accounts:tokens", args=[SLUG]), {"name": "x" * 300})
    assert response.status_code == 400
    assert 'href="#id_name"' in summary_of(response)


def test_passwords_that_differ_show_the_summary(
    client, personas, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the worker writes the reset email
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("accounts:password_reset"), {"email": "vic@acme.test"})
    path = LINK.search(mail.outbox[-1].body).group(1)
    page = client.get(path, follow=True)
    response = client.post(
        page.redirect_chain[-1][0],
        {"new_password1": "a long new passphrase", "new_password2": "another passphrase"},
    )
    assert response.status_code == 200
    assert 'href="#id_new_password2"' in summary_of(response)
