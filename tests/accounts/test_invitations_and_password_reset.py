"""Member invitations (a new member sets a password from the emailed link) and password reset
(Django's own views in the site's layout), both emailed through the outbox in the member's
language."""

import re

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from accounts.services import membership_remove
from outbox.models import EmailKind, OutboundEmail
from tests.personas import PASSWORD

LINK = re.compile(r"https?://[^/\s]+(/accounts/[\w/-]+/)")


@pytest.fixture
def owner_client(client, personas):
    client.force_login(personas.alice)
    return client


def invite(client, personas, email, language="en", role="assessor"):
    return client.post(
        reverse("accounts:members", args=[personas.acme.slug]),
        {"email": email, "role": role, "language": language},
    )


def test_a_new_member_is_invited_and_sets_a_password_through_the_link(
    owner_client, personas, client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = invite(owner_client, personas, "nina@acme.test", language="zh-hant")
    assert response.status_code == 302
    (email,) = mail.outbox
    assert email.to == ["nina@acme.test"]
    assert "Acme Procurement" in email.subject and "invited" not in email.subject  # Chinese
    path = LINK.search(email.body).group(1)
    assert path.startswith("/accounts/invitation/")
    assert OutboundEmail.objects.get(to_address="nina@acme.test").body == ""  # secret

    client.logout()
    page = client.get(path, follow=True)
    assert page.status_code == 200 and page.context["invitation"] and page.context["validlink"]
    done = client.post(
        page.redirect_chain[-1][0],
        {"new_password1": "a long new passphrase", "new_password2": "a long new passphrase"},
    )
    assert done.status_code == 302 and done["Location"] == reverse("accounts:password_set_done")
    nina = User.objects.get(email="nina@acme.test")
    assert nina.check_password("a long new passphrase") and nina.preferred_language == "zh-hant"
    assert not client.get(path, follow=True).context["validlink"]  # the link worked once


def test_the_invitation_opens_in_its_language_when_the_browser_names_none(
    owner_client, personas, client, django_capture_on_commit_callbacks, settings
):
    with django_capture_on_commit_callbacks(execute=True):
        invite(owner_client, personas, "nina@acme.test", language="zh-hant")
    path = LINK.search(mail.outbox[0].body).group(1)
    client.logout()
    client.cookies.pop(settings.LANGUAGE_COOKIE_NAME, None)
    page = client.get(path, follow=True)  # the test client sends no Accept-Language
    assert page.status_code == 200 and page.context["validlink"]
    assert page["Content-Language"] == "zh-hant"
    assert '<html lang="zh-Hant-HK"' in page.content.decode()
    # A language the visitor chose on the page itself still wins.
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert client.get(page.redirect_chain[-1][0])["Content-Language"] == "en"


def test_an_invitation_leads_nowhere_once_the_member_was_removed(
    owner_client, personas, client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        invite(owner_client, personas, "nina@acme.test")
    path = LINK.search(mail.outbox[0].body).group(1)
    nina = User.objects.get(email="nina@acme.test")
    membership_remove(membership=nina.memberships.get(), actor=personas.alice)

    client.logout()
    page = client.get(path, follow=True)
    assert not page.context["validlink"]
    assert not User.objects.get(email="nina@acme.test").has_usable_password()


def test_the_invitation_names_the_role_in_the_new_members_language(
    owner_client, personas, django_capture_on_commit_callbacks
):
    """The owner works in English; the member reads Chinese, the role's name included."""
    with django_capture_on_commit_callbacks(execute=True):
        invite(owner_client, personas, "nina@acme.test", language="zh-hant", role="assessor")
    (email,) = mail.outbox
    assert "評估人" in email.body and "Assessor" not in email.body


def test_an_existing_user_is_asked_to_accept_in_the_app(
    owner_client, personas, django_capture_on_commit_callbacks
):
    """Consent first (tests/accounts/test_membership_consent.py): the email leads to the page
    where the invitation is accepted or declined, not to a membership already made."""
    with django_capture_on_commit_callbacks(execute=True):
        invite(owner_client, personas, "oscar@other.test")
    (email,) = mail.outbox
    assert reverse("accounts:organizations") in email.body and "/invitation/" not in email.body


def test_a_password_reset_emails_a_one_time_link(
    client, personas, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the worker's part, here
    page = client.get(reverse("accounts:password_reset"))
    assert page.status_code == 200 and b'class="site-header"' in page.content  # the site layout
    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(reverse("accounts:password_reset"), {"email": "vic@acme.test"})
    assert sent["Location"] == reverse("accounts:password_reset_done")
    (email,) = mail.outbox
    path = LINK.search(email.body).group(1)
    form = client.get(path, follow=True)
    assert form.context["validlink"] and not form.context["invitation"]
    client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "another long passphrase", "new_password2": "another long passphrase"},
    )
    vic = User.objects.get(email="vic@acme.test")
    assert vic.check_password("another long passphrase") and not vic.check_password(PASSWORD)


def test_an_unknown_address_gets_the_same_answer_and_no_email(client, personas):
    response = client.post(reverse("accounts:password_reset"), {"email": "nobody@acme.test"})
    assert response["Location"] == reverse("accounts:password_reset_done")
    assert not OutboundEmail.objects.filter(kind=EmailKind.PASSWORD_RESET).exists()


def test_a_reset_request_does_the_same_work_for_known_and_unknown_addresses(
    client, personas, monkeypatch, django_capture_on_commit_callbacks
):
    """Finding the account, writing and sending its email happen in a worker: the answer's
    timing cannot tell a member's address from an unknown one (no mail server is contacted,
    no extra query made, while the visitor waits)."""
    from accounts.tasks import send_password_reset

    queued = []
    monkeypatch.setattr(
        send_password_reset, "apply_async", lambda args, **_options: queued.append(args)
    )

    def ask(address):
        with (
            CaptureQueriesContext(connection) as queries,
            django_capture_on_commit_callbacks(execute=True),
        ):
            response = client.post(reverse("accounts:password_reset"), {"email": address})
        return response.status_code, response["Location"], len(queries)

    assert ask("vic@acme.test") == ask("nobody@acme.test")
    assert not mail.outbox
    assert not OutboundEmail.objects.filter(kind=EmailKind.PASSWORD_RESET).exists()
    assert [args[0] for args in queued] == ["vic@acme.test", "nobody@acme.test"]


def test_a_reset_task_delivered_twice_writes_one_email(personas, settings):
    from accounts.tasks import send_password_reset

    for _delivery in range(2):
        send_password_reset.apply(args=("VIC@acme.test", "request-1"))
    assert OutboundEmail.objects.filter(kind=EmailKind.PASSWORD_RESET).count() == 1
    send_password_reset.apply(args=("nobody@acme.test", "request-2"))
    assert OutboundEmail.objects.filter(kind=EmailKind.PASSWORD_RESET).count() == 1


def test_with_the_broker_down_the_reset_is_written_at_once(
    client, personas, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    from accounts.tasks import send_password_reset

    def broker_down(*_args, **_options):
        raise OperationalError("Connection refused")

    monkeypatch.setattr(send_password_reset, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("accounts:password_reset"), {"email": "vic@acme.test"})
    assert response["Location"] == reverse("accounts:password_reset_done")
    (email,) = mail.outbox
    assert email.to == ["vic@acme.test"] and "/accounts/password-reset/" in email.body


def test_a_member_whose_invitation_expired_gets_a_new_link_from_password_reset(
    owner_client, personas, settings, django_capture_on_commit_callbacks
):
    """Re-inviting says "already a member": the reset page is the way to a new one-time link."""
    invite(owner_client, personas, "nina@acme.test")
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with django_capture_on_commit_callbacks(execute=True):
        Client().post(reverse("accounts:password_reset"), {"email": "nina@acme.test"})
    (email,) = mail.outbox
    assert email.to == ["nina@acme.test"]
    path = LINK.search(email.body).group(1)
    assert Client().get(path, follow=True).context["validlink"]


def test_the_reset_pages_read_in_traditional_chinese(client, personas):
    client.cookies["django_language"] = "zh-hant"
    page = client.get(reverse("accounts:password_reset")).content.decode()
    assert "重設" in page
