"""The emails to a vendor's contact after the first invitation: changes requested, a
reassessment opened, reminders before the due date and when it has passed.

Each goes through the outbox under a key naming its event, in the contact's language. A
private link's token is stored nowhere (only its hash), so an email that needs a link issues a
fresh one; a reminder does so only when the contact's link has expired.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone, translation

from core.errors import ServiceError
from core.formats import list_text
from outbox.links import site_url
from outbox.models import EmailKind, OutboundEmail
from outbox.services import email_enqueue
from questionnaires.spec import Text

from ..models import (
    Assessment,
    Channel,
    ConfigurationChange,
    Review,
    Thread,
    VendorLink,
)
from .vendor_links import vendor_link_issue, vendor_link_url, vendor_question_url


@dataclass(frozen=True)
class VendorContact:
    email: str
    name: str
    language: str


def vendor_contact_for(assessment: Assessment) -> VendorContact | None:
    """Whom to write to about the assessment: the contact last invited to it (or to the one it
    renews), in the language they chose; else the vendor's contact address, in English.

    A contact whose newest link a member revoked is not written to (a fresh link in the email
    would undo the revocation): the contact invited before them is, and nobody when every
    contact invited to that assessment was revoked."""
    current: Assessment | None = assessment
    while current is not None:
        links = VendorLink.objects.filter(assessment=current).order_by("-created_at", "-pk")
        if links.exists():
            revoked: set[str] = set()
            for link in links:
                email = link.contact_email.lower()
                if email in revoked:
                    continue
                if link.state == "revoked":
                    revoked.add(email)
                    continue
                return VendorContact(link.contact_email, link.contact_name, link.language)
            return None
        current = current.renewal_of
    vendor = assessment.vendor
    if vendor.contact_email:
        return VendorContact(vendor.contact_email, vendor.contact_name, settings.LANGUAGE_CODE)
    return None


def _fresh_link(
    assessment: Assessment, contact: VendorContact, *, replace: bool = True
) -> tuple[VendorLink, str]:
    """Raises `ServiceError` when the assessment cannot go to the vendor yet (the buyer's own
    questions are not all answered)."""
    return vendor_link_issue(
        assessment=assessment,
        contact_email=contact.email,
        contact_name=contact.name,
        language=contact.language,
        member=None,  # AVIA itself, as part of the workflow (a reviewer may not invite)
        channel=Channel.SYSTEM,
        invitation=False,
        replace=replace,
    )


def _send(
    *,
    event_key: str,
    kind: str,
    template: str,
    assessment: Assessment,
    contact: VendorContact,
    **context: object,
) -> OutboundEmail | None:
    return email_enqueue(
        event_key=event_key,
        kind=kind,
        to=contact.email,
        language=contact.language,
        template=template,
        context={
            "assessment": assessment,
            "organization": assessment.organization,
            "contact": contact,
            **context,
        },
        organization=assessment.organization,
        secret=True,
    )


@dataclass(frozen=True)
class ReopenedQuestion:
    code: str
    text: Text
    url: str


def changes_requested_notify(*, review: Review) -> OutboundEmail | None:
    """Tell the vendor which questions to answer again (each a link to it) and why."""
    assessment = review.assessment
    contact = vendor_contact_for(assessment)
    if contact is None:
        return None  # nobody outside was invited: the assessor answers for the vendor
    # The vendor's earlier link keeps working: they may still be reading the earlier email.
    link, token = _fresh_link(assessment, contact, replace=False)
    questions = assessment.questionnaire.spec.questions
    reopened = [
        ReopenedQuestion(
            code=code,
            text=questions[code].text,
            url=vendor_question_url(token, questions[code]),
        )
        for code in review.reopened_codes
        if code in questions
    ]
    return _send(
        event_key=f"changes-requested:{review.pk}",
        kind=EmailKind.CHANGES_REQUESTED,
        template="changes_requested",
        assessment=assessment,
        contact=contact,
        review=review,
        questions=reopened,
        link=link,
    )


def renewal_notify(
    *, renewal: Assessment, declared_by: VendorLink | None = None
) -> OutboundEmail | None:
    """Invite the vendor to confirm or change the answers of a reassessment: the contact who
    declared the change through their link (`declared_by`, the one the portal names), else
    the contact last invited."""
    contact = (
        VendorContact(declared_by.contact_email, declared_by.contact_name, declared_by.language)
        if declared_by is not None
        else vendor_contact_for(renewal)
    )
    if contact is None:
        return None
    try:
        link, token = _fresh_link(renewal, contact)
    except ServiceError:
        return None  # stays a draft: the weekly digest asks the assessors to finish and invite
    return _send(
        event_key=f"renewal:{renewal.pk}",
        kind=EmailKind.RENEWAL,
        template="renewal",
        assessment=renewal,
        contact=contact,
        link=link,
        url=vendor_link_url(token),
        changes=_change_list(renewal, contact.language),
    )


def _change_list(renewal: Assessment, language: str) -> str:
    """The declared changes in the contact's words, as their language lists them."""
    with translation.override(language):
        labels = [
            str(ConfigurationChange(code).label)
            for code in renewal.configuration_change.get("changes", [])
            if code in ConfigurationChange.values
        ]
    return list_text(labels, language)


def due_date_remind(*, assessment: Assessment, overdue: bool) -> OutboundEmail | None:
    """Remind the contact of the due date (or that it has passed), once per due date; with a
    fresh link when theirs has expired."""
    due = assessment.due_date
    kind = EmailKind.OVERDUE if overdue else EmailKind.DUE_SOON
    event_key = f"{kind}:{assessment.pk}:{due.isoformat() if due else ''}"
    contact = vendor_contact_for(assessment)
    if contact is None or OutboundEmail.objects.filter(event_key=event_key).exists():
        return None
    reached = _link_of(assessment, contact)
    if reached is None:
        return None
    link, token = reached
    return _send(
        event_key=event_key,
        kind=kind,
        template="reminder",
        assessment=assessment,
        contact=contact,
        overdue=overdue,
        link=link,
        url=vendor_link_url(token) if token else "",
    )


def _link_of(assessment: Assessment, contact: VendorContact) -> tuple[VendorLink, str] | None:
    """The contact's active link (token "": they have it already), else a fresh one with its
    token; None when none can be issued yet."""
    link = (
        VendorLink.objects.filter(
            assessment=assessment,
            contact_email__iexact=contact.email,
            revoked_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .order_by("-created_at")
        .first()
    )
    if link is not None:
        return link, ""
    try:
        return _fresh_link(assessment, contact)
    except ServiceError:
        return None


def thread_question_notify(*, thread: Thread, reminder: bool = False) -> OutboundEmail | None:
    """Tell the vendor's contact that a member asked about one of their answers (or remind
    them, once per turn, that it is still unanswered): the question, the last message, and
    where to answer."""
    assessment = thread.assessment
    contact = vendor_contact_for(assessment)
    if contact is None or not VendorLink.objects.filter(assessment=assessment).exists():
        # Not invited yet: a link issued here would send the draft. The invitation's landing
        # page lists the questions.
        return None
    last = thread.messages.order_by("-created_at", "-pk").first()
    kind = EmailKind.THREAD_REMINDER if reminder else EmailKind.THREAD_QUESTION
    event_key = (
        f"{kind}:{thread.pk}:{thread.turn_since.isoformat()}"
        if reminder
        else f"{kind}:{last.pk if last else thread.pk}"
    )
    if OutboundEmail.objects.filter(event_key=event_key).exists():
        return None
    reached = _link_of(assessment, contact)
    if reached is None:
        return None
    link, token = reached
    question = assessment.questionnaire.spec.questions.get(thread.question_code)
    return _send(
        event_key=event_key,
        kind=kind,
        template="thread_question",
        assessment=assessment,
        contact=contact,
        thread=thread,
        question_text=question.text if question else None,
        message=last,
        reminder=reminder,
        link=link,
        url=site_url("portal:thread", token, thread.question_code) if token else "",
    )
