"""Clarification threads: a member asks the vendor about one answer, the vendor answers through
their link, both write until a member resolves the thread (and may reopen it).

One thread per question: a later question, or a reviewer's note on a re-opened question,
continues it. Each write is in the audit trail; the vendor is emailed when asked, the members
are notified when the vendor answers."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.db import lock_row
from core.errors import ServiceError
from core.text import text_fields_errors
from notifications.models import NotificationEvent
from notifications.services import notify
from outbox.links import site_path

from ..audit import audit_record
from ..models import (
    Assessment,
    Channel,
    Thread,
    ThreadMessage,
    ThreadStatus,
    ThreadTurn,
    VendorLink,
)
from .answers import vendor_question_codes
from .guards import require_member
from .vendor_mail import thread_question_notify

MESSAGE_MAX_LENGTH = 4000


def _body_errors(body: str) -> dict[str, list[Any]]:
    errors: dict[str, list[Any]] = text_fields_errors({"body": (body, MESSAGE_MAX_LENGTH)})
    if not errors and not (body or "").strip():
        errors["body"] = [_("Write the message.")]
    return errors


@transaction.atomic
def thread_ask(
    *,
    assessment: Assessment,
    member: OrgContext,
    question_code: str,
    body: str,
    channel: str,
) -> ThreadMessage:
    """A member writes to the vendor about one question: opens its thread, or continues it
    (reopening it when it was resolved). The vendor's turn; they are emailed."""
    require_member(member, assessment, Capability.EDIT_ASSESSMENT)
    errors = thread_message_errors(assessment=assessment, question_code=question_code, body=body)
    if errors:
        raise ServiceError(errors)
    return thread_post(
        assessment=assessment,
        actor=member.user,
        question_code=question_code,
        body=body,
        channel=channel,
    )


def thread_message_errors(
    *, assessment: Assessment, question_code: str, body: str, field: str = "body"
) -> dict[str, list[Any]]:
    """Why a member's message about `question_code` cannot be posted (empty: it can); the
    body's errors under `field`."""
    errors: dict[str, list[Any]] = {
        field if key == "body" else key: value for key, value in _body_errors(body).items()
    }
    if question_code not in vendor_question_codes(assessment.questionnaire.spec):
        errors["question_code"] = [
            _("%(code)s is not a question the vendor answers.") % {"code": question_code}
        ]
    return errors


def thread_post(
    *, assessment: Assessment, actor: User, question_code: str, body: str, channel: str
) -> ThreadMessage:
    """Post a member's message checked by `thread_message_errors`, in the caller's
    transaction: by an assessor (`thread_ask`), or by a reviewer requesting changes."""
    lock_row(Assessment, assessment.pk)  # two first questions at once make one thread
    thread, created = Thread.objects.get_or_create(
        assessment=assessment,
        question_code=question_code,
        defaults={"created_by": actor},
    )
    if created:
        audit_record(**_audit(thread, channel, actor=actor), action="thread.opened")
    elif thread.status == ThreadStatus.RESOLVED:
        audit_record(**_audit(thread, channel, actor=actor), action="thread.reopened")
    thread.status = ThreadStatus.OPEN
    message = ThreadMessage.objects.create(thread=thread, author=actor, body=body.strip())
    if thread.turn != ThreadTurn.VENDOR or created:
        thread.turn, thread.turn_since = ThreadTurn.VENDOR, message.created_at
    thread.save(update_fields=["status", "turn", "turn_since"])
    audit_record(
        **_audit(thread, channel, actor=actor, message=message), action="thread.message_posted"
    )
    thread_question_notify(thread=thread)
    return message


@transaction.atomic
def thread_reply_vendor(*, vendor_link: VendorLink, question_code: str, body: str) -> ThreadMessage:
    """The vendor answers an open thread of their link's assessment (and of no other)."""
    thread = (
        Thread.objects.select_for_update()
        .filter(assessment_id=vendor_link.assessment_id, question_code=question_code)
        .first()
    )
    errors = _body_errors(body)
    if thread is None:
        errors["question_code"] = [
            _("No question about %(code)s was asked.") % {"code": question_code}
        ]
    elif thread.status != ThreadStatus.OPEN:
        errors["question_code"] = [
            _("The question about %(code)s is resolved: the buyer closed it.")
            % {"code": question_code}
        ]
    if errors:
        raise ServiceError(errors)
    assert thread is not None
    message = ThreadMessage.objects.create(
        thread=thread, vendor_link=vendor_link, body=body.strip()
    )
    if thread.turn != ThreadTurn.MEMBER:
        thread.turn, thread.turn_since = ThreadTurn.MEMBER, message.created_at
        thread.save(update_fields=["turn", "turn_since"])
    audit_record(
        **_audit(thread, Channel.VENDOR_LINK, vendor_link=vendor_link, message=message),
        action="thread.message_posted",
    )
    assessment = thread.assessment
    notify(
        organization=assessment.organization,
        event=NotificationEvent.THREAD_ANSWERED,
        key=f"{NotificationEvent.THREAD_ANSWERED}:message:{message.pk}",
        recipients=[
            user for user in (thread.created_by, assessment.created_by) if user is not None
        ],
        words={"vendor": assessment.vendor.name, "code": thread.question_code},
        path=site_path("assessments:thread", assessment.pk, thread.question_code),
    )
    return message


@transaction.atomic
def thread_resolve(
    *, thread: Thread, member: OrgContext, channel: str, resolved: bool = True
) -> Thread:
    """A member closes the thread (`resolved=False`: reopens it, the vendor's turn again)."""
    require_member(member, thread.assessment, Capability.EDIT_ASSESSMENT)
    thread = Thread.objects.select_for_update().get(pk=thread.pk)
    wanted = ThreadStatus.RESOLVED if resolved else ThreadStatus.OPEN
    if thread.status == wanted:
        return thread  # a double click: already so
    thread.status = wanted
    fields = ["status"]
    if not resolved:
        thread.turn, thread.turn_since = ThreadTurn.VENDOR, timezone.now()
        fields += ["turn", "turn_since"]
    thread.save(update_fields=fields)
    if resolved:
        audit_record(**_audit(thread, channel, actor=member.user), action="thread.resolved")
    else:
        audit_record(**_audit(thread, channel, actor=member.user), action="thread.reopened")
    return thread


def _audit(
    thread: Thread,
    channel: str,
    *,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
    message: ThreadMessage | None = None,
) -> dict[str, Any]:
    """What every thread event records but its action."""
    detail: dict[str, Any] = {"question": thread.question_code}
    if message is not None:
        detail["message"] = message.pk
    return {
        "organization": thread.assessment.organization,
        "assessment": thread.assessment,
        "actor": actor,
        "vendor_link": vendor_link,
        "channel": channel,
        "detail": detail,
    }
