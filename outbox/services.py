"""Writing emails into the outbox and sending them.

`email_enqueue` is called inside the transaction of the change that needs the email; the first
attempt to send happens once that transaction commits (in the same process, so a request's
email leaves as soon as the request is done), and `emails_retry_due` — run by Celery beat —
sends what is waiting: rows whose mail server failed, after a growing delay, and rows whose
process died before trying.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from email.utils import formataddr, parseaddr
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import models, transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation

from core.attempts import attempt_claim, due_for_retry, retry_delay
from core.db import create_once

from .models import EmailStatus, OutboundEmail

logger = logging.getLogger(__name__)


def email_enqueue(
    *,
    event_key: str,
    kind: str,
    to: str,
    language: str,
    template: str,
    context: dict[str, Any],
    organization: models.Model | None = None,
    secret: bool = False,
) -> OutboundEmail | None:
    """Write the email of one event, rendered in `language`, and send it after commit.

    `template` names `emails/<template>.txt` (the body) and `emails/<template>_subject.txt`.
    Returns None, writing nothing, when the event's email was written before.
    """
    if OutboundEmail.objects.filter(event_key=event_key).exists():
        return None
    # The recipient's language and the organization's clock, like every page AVIA shows them.
    zone = getattr(organization, "time_zone", None) or timezone.get_current_timezone_name()
    sender = email_sender_of(organization)
    context = {**context, "email_signature": sender}
    with translation.override(language), timezone.override(zone):
        subject = " ".join(render_to_string(f"emails/{template}_subject.txt", context).split())
        body = render_to_string(f"emails/{template}.txt", context)
    # A concurrent writer of the same event wins: its row stands, and this call writes none.
    email = create_once(
        OutboundEmail,
        organization=organization,
        event_key=event_key,
        kind=kind,
        to_address=to,
        language=language,
        subject=subject[:300],
        body=body,
        from_name=sender.name[:200],
        reply_to=sender.reply_to,
        body_is_secret=secret,
    )
    if email is None:
        return None
    transaction.on_commit(lambda: email_deliver(email_id=email.pk))
    return email


@dataclass(frozen=True)
class EmailSender:
    """Whose an email is: the organization's sender name and reply-to address, and the
    consultancy that prepared it (its signature says "prepared by …")."""

    name: str = ""
    reply_to: str = ""
    prepared_by: str = ""


def email_sender_of(organization: Any) -> EmailSender:
    """The sender of an organization's emails (an `accounts.Organization`, read by its
    attributes: this app imports nothing of the project); AVIA's own for mail of none."""
    if organization is None:
        return EmailSender()
    consultancy = organization.prepared_by()
    return EmailSender(
        name=organization.email_sender,
        reply_to=organization.email_reply_to,
        prepared_by=consultancy.display_name if consultancy is not None else "",
    )


def from_address(name: str) -> str:
    """DEFAULT_FROM_EMAIL's address under `name` (the operator's domain sends every email;
    only the name shown is the organization's)."""
    default_name, address = parseaddr(settings.DEFAULT_FROM_EMAIL)
    return formataddr((name or default_name, address)) if address else settings.DEFAULT_FROM_EMAIL


def send_mail(
    subject: str, body: str, from_email: str, to: list[str], *, reply_to: list[str] | None
) -> None:
    EmailMessage(subject, body, from_email, to, reply_to=reply_to).send(fail_silently=False)


def email_deliver(*, email_id: int, now: dt.datetime | None = None) -> str | None:
    """Try to send one waiting email; returns its status afterwards (None: not ours to send —
    sent already, given up, not due yet, or being sent by another process)."""
    now = now or timezone.now()
    if not attempt_claim(OutboundEmail.objects, pk=email_id, pending=EmailStatus.PENDING, now=now):
        return None
    email = OutboundEmail.objects.get(pk=email_id)
    # The row while this claim holds: a send slower than CLAIM_TIMEOUT (EMAIL_TIMEOUT keeps it
    # shorter) may have been taken over and sent by another process. A failure here must not
    # put that row back in the queue.
    ours = OutboundEmail.objects.filter(pk=email_id, claimed_at=now)
    attempts = email.attempts + 1
    try:
        send_mail(
            email.subject,
            email.body,
            from_address(email.from_name),
            [email.to_address],
            reply_to=[email.reply_to] if email.reply_to else None,
        )
    except Exception as exc:  # SMTP refusals, unreachable servers, timeouts: retried alike
        gave_up = attempts >= settings.OUTBOX_MAX_ATTEMPTS
        delay = retry_delay(attempts=attempts, base_seconds=settings.OUTBOX_RETRY_SECONDS)
        status = EmailStatus.FAILED if gave_up else EmailStatus.PENDING
        ours.update(
            status=status,
            attempts=attempts,
            last_error=f"{type(exc).__name__}: {exc}"[:2000],
            next_attempt_at=None if gave_up else now + delay,
            claimed_at=None,
            # Nothing sends a failed email again: a private link in it is not kept either.
            **({"body": ""} if gave_up and email.body_is_secret else {}),
        )
        logger.warning(
            "email %s (%s) not sent, attempt %s: %s", email_id, email.kind, attempts, exc
        )
        return status
    # It left: that stands whoever holds the row now.
    OutboundEmail.objects.filter(pk=email_id).update(
        status=EmailStatus.SENT,
        attempts=attempts,
        sent_at=now,
        claimed_at=None,
        next_attempt_at=None,
        **({"body": ""} if email.body_is_secret else {}),
    )
    return EmailStatus.SENT


def emails_retry_due(*, now: dt.datetime | None = None, limit: int = 500) -> int:
    """Send the emails that are due again; returns how many were sent."""
    now = now or timezone.now()
    due = due_for_retry(OutboundEmail.objects, pending=EmailStatus.PENDING, now=now)
    ids = list(due.order_by("created_at").values_list("pk", flat=True)[:limit])
    return sum(email_deliver(email_id=pk, now=now) == EmailStatus.SENT for pk in ids)
