"""Vendor links: the private link issued (with its invitation email) and revoked, its
addresses, and resolving a token to the one assessment it reaches."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ConflictError, ServiceError
from core.formats import format_datetime
from core.text import text_fields_errors
from outbox.links import site_url
from outbox.models import EmailKind
from outbox.services import email_enqueue
from questionnaires.spec import Question
from questionnaires.validation import missing_required

from ..audit import audit_record
from ..models import (
    Assessment,
    VendorLink,
)
from .answers import answer_values, buyer_section_codes
from .guards import require_member, transition


def vendor_link_url(token: str) -> str:
    """The private link's full address (its landing page), for an email."""
    return site_url("portal:landing", token)


def vendor_question_url(token: str, question: Question) -> str:
    """The full address of one question in the vendor portal, for an email."""
    return site_url("portal:section", token, question.section, fragment=question_anchor(question))


def portal_question_path(token: str, question: Question) -> str:
    """One question in the vendor portal: its section, at the question."""
    return (
        f"{reverse('portal:section', args=[token, question.section])}#{question_anchor(question)}"
    )


def question_anchor(question: Question) -> str:
    return f"q-{question.code}"  # the id of the question's input in the portal


def vendor_link_token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@transaction.atomic
def vendor_link_issue(
    *,
    assessment: Assessment,
    contact_email: str,
    member: OrgContext | None,
    channel: str,
    contact_name: str = "",
    language: str = "en",
    days: int | None = None,
    invitation: bool = True,
    replace: bool = True,
    replacing: VendorLink | None = None,
    links_seen: int | None = None,
) -> tuple[VendorLink, str]:
    """Invite a vendor contact: a new private link (the token is returned once and emailed),
    replacing any earlier active link to the same address unless `replace=False`.
    `invitation=False`: the caller sends its own email with the link (a reminder, a
    reassessment, a request for changes). `member=None`: AVIA itself issues the link, as part
    of a workflow email (`vendor_mail`). `replacing`: the link a member chose to send again
    ("Send a new link"); refused (409) when a newer link replaced it meanwhile (the same
    confirm posted twice), which would retire the link the vendor was just emailed.
    `links_seen`: the newest link id the member's page showed; a link to the same address
    issued since (the same invitation posted twice) refuses this one (409)."""
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_email

    if member is not None:
        require_member(member, assessment, Capability.INVITE_VENDOR)
    actor = member.user if member is not None else None
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    if replacing is not None:
        newer = (
            VendorLink.objects.filter(pk=replacing.pk, assessment=assessment)
            .values_list("replaced_by__created_at", flat=True)
            .first()
        )
        if newer is not None:
            raise ConflictError(
                {
                    "link": [
                        _("This link was already replaced by a new link, sent %(date)s.")
                        % {"date": _when(newer, assessment)}
                    ]
                }
            )
    if links_seen is not None:
        newer = (
            assessment.vendor_links.filter(pk__gt=links_seen, contact_email__iexact=contact_email)
            .order_by("-pk")
            .values_list("created_at", flat=True)
            .first()
        )
        if newer is not None:
            raise ConflictError(
                {
                    "contact_email": [
                        _(
                            "A link was sent to %(email)s at %(time)s, after this page was "
                            "loaded. To replace it, send the invitation again."
                        )
                        % {
                            "email": contact_email,
                            "time": _when(newer, assessment),
                        }
                    ]
                }
            )
    errors: dict[str, list[Any]] = text_fields_errors({"contact_name": (contact_name, 200)})
    try:
        validate_email(contact_email)
    except ValidationError:
        errors["contact_email"] = [_("Enter a valid email address.")]
    if language not in dict(settings.LANGUAGES):
        errors["language"] = [_("Choose English or Traditional Chinese.")]
    spec = assessment.questionnaire.spec
    missing_use = missing_required(
        spec, answer_values(assessment), sections=buyer_section_codes(spec)
    )
    if missing_use:
        errors["answers"] = [
            _("Answer the buyer's questions (%(codes)s) before inviting the vendor.")
            % {"codes": ", ".join(missing_use)}
        ]
    if errors:
        raise ServiceError(errors)
    transition(assessment, "invite")
    assessment.save(update_fields=["status", "updated_at"])
    now = timezone.now()
    # replace=False keeps the earlier links working (a reminder with a link of its own).
    replaced_ids = (
        list(
            assessment.vendor_links.filter(
                contact_email__iexact=contact_email, revoked_at__isnull=True
            ).values_list("pk", flat=True)
        )
        if replace
        else []
    )
    token = secrets.token_urlsafe(32)  # 256 bits
    link = VendorLink.objects.create(
        assessment=assessment,
        contact_email=contact_email,
        contact_name=contact_name,
        language=language,
        token_hash=vendor_link_token_hash(token),
        created_by=actor,
        expires_at=now + dt.timedelta(days=days or settings.VENDOR_LINK_DAYS),
    )
    VendorLink.objects.filter(pk__in=replaced_ids).update(revoked_at=now, replaced_by=link)
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="vendor_link.issued",
        actor=actor,
        channel=channel,
        detail={"contact": contact_email, "expires_at": link.expires_at.isoformat()},
    )
    if invitation:
        _send_invitation(link, vendor_link_url(token))
    return link, token


def _send_invitation(link: VendorLink, url: str) -> None:
    assessment = link.assessment
    email_enqueue(
        event_key=f"vendor-link:{link.pk}",
        kind=EmailKind.VENDOR_INVITATION,
        to=link.contact_email,
        language=link.language,
        template="vendor_invitation",
        context={
            "link": link,
            "url": url,
            "assessment": assessment,
            "organization": assessment.organization,
        },
        organization=assessment.organization,
        secret=True,
    )


@transaction.atomic
def vendor_link_revoke(*, link: VendorLink, member: OrgContext, channel: str) -> VendorLink:
    require_member(member, link.assessment, Capability.INVITE_VENDOR)
    actor = member.user
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
        audit_record(
            organization=link.assessment.organization,
            assessment=link.assessment,
            action="vendor_link.revoked",
            actor=actor,
            channel=channel,
            detail={"contact": link.contact_email},
        )
    return link


def vendor_link_resolve(*, token: str) -> VendorLink | None:
    """The active link for a token, or None (unknown, revoked and expired look the same)."""
    if not token or len(token) > 200:
        return None
    link = (
        VendorLink.objects.filter(
            token_hash=vendor_link_token_hash(token),
            revoked_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .select_related(
            "assessment__organization", "assessment__questionnaire", "assessment__vendor"
        )
        .first()
    )
    if link is not None and (
        link.last_used_at is None or timezone.now() - link.last_used_at > dt.timedelta(minutes=1)
    ):
        VendorLink.objects.filter(pk=link.pk).update(last_used_at=timezone.now())
    return link


def vendor_link_dead(*, token: str) -> VendorLink | None:
    """The link a token once opened and no longer does (expired, replaced or revoked), with
    its organization and sender, so its page can say whom to ask for a new one; None for a
    token that never named a link, or names an active one."""
    if not token or len(token) > 200:
        return None
    link = (
        VendorLink.objects.filter(token_hash=vendor_link_token_hash(token))
        .select_related("assessment__organization", "created_by")
        .first()
    )
    return link if link is not None and not link.is_active else None


@transaction.atomic
def vendor_link_language_set(*, link: VendorLink, language: str) -> None:
    """The language the vendor chose in the portal: the link's, from now on (on any device,
    and for the emails that go with it)."""
    if language in dict(settings.LANGUAGES) and link.language != language:
        VendorLink.objects.filter(pk=link.pk).update(language=language)
        link.language = language


def _when(moment: dt.datetime, assessment: Assessment) -> str:
    """A time in a message, on the organization's clock and in the reader's language."""
    return format_datetime(
        moment, translation.get_language() or "en", assessment.organization.time_zone
    )
