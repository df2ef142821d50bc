"""The outbox: one email per event, sent after commit, retried when the mail server fails,
secrets not kept once sent."""

import datetime as dt

import pytest
from django.core import mail
from django.utils import timezone

from outbox.models import EmailKind, EmailStatus, OutboundEmail
from outbox.selectors import emails_for_organization
from outbox.services import email_deliver, email_enqueue, emails_retry_due

REFUSING = "tests.outbox.backends.RefusingBackend"


@pytest.fixture(autouse=True)
def empty_outbox(personas):
    """Without the members' invitations written when the personas were made."""
    OutboundEmail.objects.all().delete()


def enqueue(personas, key="event:1", **overrides):
    fields = {
        "event_key": key,
        "kind": EmailKind.VENDOR_INVITATION,
        "to": "sec@vendor.test",
        "language": "en",
        "template": "vendor_invitation",
        "context": {
            "link": {"contact_name": "Mei", "contact_email": "", "expires_at": timezone.now()},
            "url": "https://avia.test/v/secret-token/",
            "assessment": {"vendor": {"name": "Inferno AI"}},
            "organization": personas.acme,
        },
        "organization": personas.acme,
        "secret": True,
    }
    return email_enqueue(**{**fields, **overrides})


def test_it_sends_an_event_once_however_often_it_is_asked(
    personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first = enqueue(personas)
        again = enqueue(personas)
    assert first is not None and again is None
    assert len(mail.outbox) == 1
    assert (
        mail.outbox[0].subject
        == "Acme Procurement asks you to complete an AI vendor isolation assessment"
    )
    first.refresh_from_db()
    assert (first.status, first.attempts, first.last_error) == (EmailStatus.SENT, 1, "")


def test_it_renders_the_email_in_the_recipients_language(
    personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        enqueue(personas, language="zh-hant")
    assert "/v/secret-token/" in mail.outbox[0].body
    assert "Acme Procurement" in mail.outbox[0].subject
    assert "asks you" not in mail.outbox[0].subject  # translated, not English


def test_it_forgets_a_secret_body_once_sent_and_keeps_a_plain_one(
    personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        secret = enqueue(personas, key="a")
        plain = enqueue(personas, key="b", secret=False)
    secret.refresh_from_db()
    plain.refresh_from_db()
    assert secret.body == "" and "secret-token" in mail.outbox[0].body
    assert "secret-token" in plain.body


def test_a_refused_email_waits_and_is_retried_later(
    personas, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = REFUSING
    with django_capture_on_commit_callbacks(execute=True):
        email = enqueue(personas)
    email.refresh_from_db()
    assert email.status == EmailStatus.PENDING and email.attempts == 1
    assert "SMTPServerDisconnected: Connection unexpectedly closed" == email.last_error
    assert email.body  # kept until it is sent
    retry_at = email.next_attempt_at
    assert retry_at - timezone.now() == pytest.approx(
        dt.timedelta(seconds=settings.OUTBOX_RETRY_SECONDS), abs=dt.timedelta(seconds=5)
    )

    assert emails_retry_due(now=retry_at - dt.timedelta(seconds=1)) == 0  # not yet due
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert emails_retry_due(now=retry_at) == 1
    email.refresh_from_db()
    assert (email.status, email.attempts, email.body) == (EmailStatus.SENT, 2, "")
    assert len(mail.outbox) == 1
    assert emails_retry_due(now=retry_at + dt.timedelta(hours=1)) == 0


def test_it_gives_up_after_the_last_attempt_and_says_why(personas, settings):
    settings.EMAIL_BACKEND = REFUSING
    settings.OUTBOX_MAX_ATTEMPTS = 3
    email = enqueue(personas)  # no commit in this test: the retry sweep makes every attempt
    now = timezone.now() + dt.timedelta(minutes=2)
    for expected_status in (EmailStatus.PENDING, EmailStatus.PENDING, EmailStatus.FAILED):
        assert email_deliver(email_id=email.pk, now=now) == expected_status
        email.refresh_from_db()
        now = email.next_attempt_at or now
    assert (email.attempts, email.next_attempt_at) == (3, None)
    assert email_deliver(email_id=email.pk, now=now + dt.timedelta(days=1)) is None
    assert email.last_error.startswith("SMTPServerDisconnected")


def test_a_row_claimed_by_another_sender_is_not_sent_twice(personas):
    email = enqueue(personas)
    OutboundEmail.objects.filter(pk=email.pk).update(claimed_at=timezone.now())
    assert email_deliver(email_id=email.pk) is None
    assert mail.outbox == []
    # …unless that sender died: its claim lapses.
    later = timezone.now() + dt.timedelta(minutes=10)
    assert email_deliver(email_id=email.pk, now=later) == EmailStatus.SENT


def test_the_outbox_of_an_organization_holds_only_its_own_emails(personas):
    enqueue(personas, key="acme")
    enqueue(personas, key="other", organization=personas.other)
    assert [e.event_key for e in emails_for_organization(organization=personas.acme)] == ["acme"]


def test_a_secret_body_is_forgotten_once_the_outbox_gives_up(personas, settings):
    """Nothing sends a failed email again: a private link in it must not stay in the database."""
    settings.EMAIL_BACKEND = REFUSING
    settings.OUTBOX_MAX_ATTEMPTS = 1
    secret = enqueue(personas, key="a")
    plain = enqueue(personas, key="b", secret=False)
    now = timezone.now() + dt.timedelta(minutes=2)
    assert email_deliver(email_id=secret.pk, now=now) == EmailStatus.FAILED
    assert email_deliver(email_id=plain.pk, now=now) == EmailStatus.FAILED
    secret.refresh_from_db()
    plain.refresh_from_db()
    assert secret.body == "" and secret.last_error
    assert "secret-token" in plain.body


def test_a_sender_whose_claim_lapsed_does_not_undo_the_one_that_sent(personas, monkeypatch):
    """A send slower than the claim: another sender took the row over and sent it. The slow one
    then fails; the row stays sent (not queued for a second copy)."""
    email = enqueue(personas)
    start = timezone.now() + dt.timedelta(minutes=2)

    from outbox import services

    real_send_mail = services.send_mail
    taken_over = []

    def slow_then_refused(*args, **kwargs):
        if taken_over:  # the other sender's attempt: the mail server takes it
            return real_send_mail(*args, **kwargs)
        taken_over.append(True)
        takeover = start + dt.timedelta(minutes=10)
        assert email_deliver(email_id=email.pk, now=takeover) == EmailStatus.SENT
        raise OSError("timed out")

    with monkeypatch.context() as patched:
        patched.setattr(services, "send_mail", slow_then_refused)
        email_deliver(email_id=email.pk, now=start)
    assert taken_over
    email.refresh_from_db()
    assert (email.status, email.next_attempt_at, email.body) == (EmailStatus.SENT, None, "")
    assert len(mail.outbox) == 1


def test_the_mail_server_is_given_a_time_limit_shorter_than_a_claim(settings):
    from core.attempts import CLAIM_TIMEOUT

    assert 0 < settings.EMAIL_TIMEOUT < CLAIM_TIMEOUT.total_seconds()


@pytest.mark.parametrize(("language", "prepared"), [("en", "Prepared by"), ("zh-hant", "編製")])
def test_an_organizations_email_carries_its_sender_reply_to_and_consultancy(
    personas, settings, django_capture_on_commit_callbacks, language, prepared
):
    """Issue 27: the organization's sender name and reply-to address, the envelope sender the
    operator's; signed with the client's name and "prepared by" its consultancy, not "— AVIA"."""
    from accounts.models import ClientEngagement, OrganizationKind
    from accounts.services import organization_create, organization_update_branding

    settings.DEFAULT_FROM_EMAIL = "AVIA <no-reply@avia.local>"
    organization_update_branding(
        organization=personas.acme,
        actor=personas.alice,
        report_display_name="",
        brand_colour="",
        email_sender_name="Acme Vendor Risk",
        email_reply_to="Risk@Acme.test",
    )
    helix = organization_create(
        name="Helix Advisory", owner_email="hana@helix.test", kind=OrganizationKind.CONSULTANCY
    )
    ClientEngagement.objects.create(consultancy=helix, client=personas.acme)
    personas.acme.refresh_from_db()

    with django_capture_on_commit_callbacks(execute=True):
        enqueue(personas, language=language)

    sent = mail.outbox[0]
    assert sent.from_email == "Acme Vendor Risk <no-reply@avia.local>"
    assert sent.reply_to == ["risk@acme.test"]
    assert "— Acme Vendor Risk" in sent.body and "— AVIA" not in sent.body
    assert prepared in sent.body and "Helix Advisory" in sent.body
    row = OutboundEmail.objects.get()
    assert (row.from_name, row.reply_to) == ("Acme Vendor Risk", "risk@acme.test")


def test_mail_of_no_organization_is_avias_own(
    personas, settings, django_capture_on_commit_callbacks
):
    settings.DEFAULT_FROM_EMAIL = "AVIA <no-reply@avia.local>"
    with django_capture_on_commit_callbacks(execute=True):
        enqueue(personas, organization=None)
    sent = mail.outbox[0]
    assert (sent.from_email, sent.reply_to) == ("AVIA <no-reply@avia.local>", [])
    assert "— AVIA" in sent.body and "Prepared by" not in sent.body


def test_a_reply_to_that_is_not_an_address_is_refused_and_nothing_saved(personas):
    from accounts.services import organization_update_branding
    from core.errors import ServiceError

    with pytest.raises(ServiceError) as refused:
        organization_update_branding(
            organization=personas.acme,
            actor=personas.alice,
            report_display_name="",
            brand_colour="",
            email_reply_to="not an address",
        )
    assert "email_reply_to" in refused.value.errors
    personas.acme.refresh_from_db()
    assert personas.acme.email_reply_to == ""
