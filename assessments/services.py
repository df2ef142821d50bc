"""Writes for assessments: every change to tenant data in this app goes through here.

Keyword-only, typed, atomic; validation happens before anything is saved, and a request with
any error saves nothing. Scoring is queued with `delay_on_commit`, never from inside an open
transaction.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import secrets
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from accounts.models import Organization, User
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ConflictError, ForbiddenError, ServiceError, StorageFullError
from core.text import readable_name, text_errors, text_fields_errors
from outbox.links import site_url
from outbox.models import EmailKind
from outbox.services import email_enqueue
from questionnaires.spec import Question, QuestionnaireSpec, version_key
from questionnaires.validation import (
    AnswerValidationError,
    hidden_codes,
    missing_required,
    stored_values,
    validate_answers,
)
from scoring.models import Ruleset

from . import lifecycle
from .audit import audit_record
from .models import (
    Answer,
    AnswerRevision,
    Assessment,
    AssessmentStatus,
    Channel,
    EvidenceFile,
    Review,
    ReviewDecision,
    RiskDecision,
    ScoringRun,
    Vendor,
    VendorLink,
)
from .queueing import publish_on_commit
from .sniffing import sniff_content_type
from .storage import UploadTooLarge, evidence_storage, store_upload

logger = logging.getLogger(__name__)


def _require_member(member: OrgContext, assessment: Assessment, capability: str) -> None:
    """The rule every member-facing service applies first: the caller's role grants the
    capability (403), and the object belongs to the caller's organization."""
    member.require(capability)
    if assessment.organization_id != member.organization.pk:
        raise ServiceError({"assessment": [_("Unknown assessment.")]})


def _transition(assessment: Assessment, event: str) -> None:
    # An event the status does not allow raises `IllegalTransition`, a `ConflictError`.
    assessment.status = lifecycle.next_status(event, assessment.status)


# -- vendors -------------------------------------------------------------------------------


@transaction.atomic
def vendor_create(
    *, organization: Organization, actor: User, channel: str, **fields: Any
) -> Vendor:
    vendor = Vendor(organization=organization, **fields)
    _full_clean(vendor)
    vendor.save()
    audit_record(
        organization=organization,
        action="vendor.created",
        actor=actor,
        channel=channel,
        detail={"vendor": vendor.name},
    )
    return vendor


@transaction.atomic
def vendor_update(*, vendor: Vendor, actor: User, channel: str, **fields: Any) -> Vendor:
    for name, value in fields.items():
        setattr(vendor, name, value)
    _full_clean(vendor)
    vendor.save()
    audit_record(
        organization=vendor.organization,
        action="vendor.updated",
        actor=actor,
        channel=channel,
        detail={"vendor": vendor.name, "fields": sorted(fields)},
    )
    return vendor


def _full_clean(instance: Any) -> None:
    from django.core.exceptions import ValidationError

    text_problems = text_fields_errors(
        {
            field.name: (getattr(instance, field.attname), field.max_length)
            for field in type(instance)._meta.concrete_fields
            if isinstance(field, models.CharField | models.TextField)
        }
    )
    if text_problems:
        raise ServiceError(text_problems)
    try:
        instance.full_clean(exclude=["organization"])
    except ValidationError as exc:
        raise ServiceError(exc.message_dict) from exc
    model = type(instance)
    if model is Vendor and (
        Vendor.objects.filter(organization=instance.organization, name=instance.name)
        .exclude(pk=instance.pk)
        .exists()
    ):
        raise ConflictError({"name": [_("A vendor with this name already exists.")]})


# -- assessments ---------------------------------------------------------------------------


def buyer_section_codes(questionnaire: QuestionnaireSpec) -> set[str]:
    return {s.code for s in questionnaire.sections if s.answered_by == "buyer"}


def vendor_question_codes(questionnaire: QuestionnaireSpec) -> set[str]:
    return {q.code for s in questionnaire.sections if s.vendor_facing for q in s.questions}


@transaction.atomic
def assessment_create(
    *,
    organization: Organization,
    vendor: Vendor,
    questionnaire_key: str,
    actor: User,
    channel: str,
    due_date: dt.date | None = None,
    answers: Mapping[str, Any] | None = None,
) -> Assessment:
    from questionnaires.models import QuestionnaireVersion

    slug, _sep, version = questionnaire_key.partition("@")
    questionnaire = QuestionnaireVersion.objects.filter(slug=slug, version=version).first()
    errors: dict[str, list[Any]] = {}
    if questionnaire is None:
        errors["questionnaire"] = [
            _("Unknown questionnaire “%(key)s”.") % {"key": questionnaire_key}
        ]
    if vendor.organization_id != organization.pk:
        errors["vendor"] = [_("Unknown vendor.")]
    clean = None
    if questionnaire is not None:
        try:
            clean = validate_answers(questionnaire.spec, answers or {})
        except AnswerValidationError as exc:
            errors.update(exc.as_text_dict())
    if errors:
        raise ServiceError(errors)
    assessment = Assessment.objects.create(
        organization=organization,
        vendor=vendor,
        questionnaire=questionnaire,
        due_date=due_date,
        created_by=actor,
    )
    audit_record(
        organization=organization,
        assessment=assessment,
        action="assessment.created",
        actor=actor,
        channel=channel,
        detail={"vendor": vendor.name, "questionnaire": questionnaire_key},
    )
    if clean and (clean.values or clean.comments):
        _store_answers(
            assessment, clean.values, clean.comments, actor=actor, vendor_link=None, channel=channel
        )
    return assessment


@transaction.atomic
def assessment_update(
    *, assessment: Assessment, actor: User, channel: str, due_date: dt.date | None
) -> Assessment:
    assessment.due_date = due_date
    assessment.save(update_fields=["due_date", "updated_at"])
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="assessment.updated",
        actor=actor,
        channel=channel,
        detail={"due_date": due_date.isoformat() if due_date else None},
    )
    return assessment


def answer_values(assessment: Assessment) -> dict[str, Any]:
    """Current answers as validated Python values (dates as `date`)."""
    return stored_values(
        assessment.questionnaire.spec,
        dict(assessment.answers.values_list("question_code", "value")),
    )


def _json_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else value


def probe_consented(assessment: Assessment) -> bool:
    """Whether the saved answers ask for the isolation probe: its result question is shown
    (PRB-01 = yes shows PRB-02)."""
    spec = assessment.questionnaire.spec
    question = spec.probe_question
    if question is None:
        return False
    return question.code not in hidden_codes(spec, answer_values(assessment))


def vendor_editable_codes(*, assessment: Assessment, vendor_link: VendorLink) -> set[str]:
    """Question codes a vendor link may change now: none once the assessment left the editable
    statuses; only the re-opened ones after a reviewer requested changes."""
    if assessment.status not in lifecycle.EDITABLE_STATUSES:
        return set()
    return editable_codes(assessment, vendor_link) or set()


def editable_codes(assessment: Assessment, vendor_link: VendorLink | None) -> set[str] | None:
    """Codes the caller may change now (None = all)."""
    spec = assessment.questionnaire.spec
    if vendor_link is None:
        return None
    codes = vendor_question_codes(spec)
    if assessment.status == AssessmentStatus.CHANGES_REQUESTED:
        codes &= set(
            assessment.answers.filter(reopened=True).values_list("question_code", flat=True)
        )
        reopened_blank = set(
            assessment.reviews.filter(decision=ReviewDecision.CHANGES_REQUESTED)
            .values_list("reopened_codes", flat=True)
            .first()
            or []
        )
        codes |= reopened_blank & vendor_question_codes(spec)
    return codes


@transaction.atomic
def answers_save(
    *,
    assessment: Assessment,
    answers: Mapping[str, Any] | None,
    comments: Mapping[str, Any] | None = None,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
    member: OrgContext | None = None,
    channel: str,
) -> dict[str, Any]:
    """Save some answers (all or nothing). Returns the stored JSON values of what changed.

    A member's role is checked per question (`member`): the buyer's own section needs
    `answer_use_section`, every other question `edit_assessment`."""
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    if member is not None:
        require_answer_capabilities(
            member=member,
            questionnaire=assessment.questionnaire.spec,
            codes={*(answers or {}), *(comments or {})},
        )
    require_answers_open(assessment)
    spec = assessment.questionnaire.spec
    clean = validate_answers(
        spec, answers, comments, allowed_codes=editable_codes(assessment, vendor_link)
    )
    changed = _store_answers(
        assessment,
        clean.values,
        clean.comments,
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
    )
    # What was typed is saved now: its drafts are no longer "not saved yet".
    assessment.drafts.filter(question_code__in={*clean.values, *clean.comments}).delete()
    return changed


def require_answers_open(assessment: Assessment) -> None:
    """Answers (and drafts of them) change only while the vendor may still answer (409)."""
    if assessment.status not in lifecycle.EDITABLE_STATUSES:
        raise ConflictError(
            {
                "status": [
                    _("Answers cannot change while the assessment is %(status)s.")
                    % {"status": AssessmentStatus(assessment.status).label}
                ]
            }
        )


def require_answer_capabilities(
    *, member: OrgContext, questionnaire: QuestionnaireSpec, codes: set[str]
) -> None:
    """Raise `ForbiddenError` naming each code the member's role may not answer.

    (Unknown codes need edit_assessment here; answer validation then reports them.)"""
    buyer_sections = buyer_section_codes(questionnaire)
    refused: dict[str, list[Any]] = {}
    for code in sorted(codes):
        question = questionnaire.questions.get(code)
        in_buyer_section = question is not None and question.section in buyer_sections
        needed = "answer_use_section" if in_buyer_section else "edit_assessment"
        if not member.can(needed):
            refused[code] = [_("Your role may not answer this question.")]
    if refused:
        raise ForbiddenError(refused)


def _store_answers(
    assessment: Assessment,
    values: Mapping[str, Any],
    comments: Mapping[str, str],
    *,
    actor: User | None,
    vendor_link: VendorLink | None,
    channel: str,
) -> dict[str, Any]:
    existing = {a.question_code: a for a in assessment.answers.all()}
    changed: dict[str, Any] = {}
    for code in sorted(set(values) | set(comments)):
        answer = existing.get(code) or Answer(assessment=assessment, question_code=code)
        new_value = _json_value(values[code]) if code in values else answer.value
        new_comment = comments.get(code, answer.comment)
        if answer.pk and answer.value == new_value and answer.comment == new_comment:
            continue
        answer.value, answer.comment = new_value, new_comment
        answer.save()
        AnswerRevision.objects.create(
            assessment=assessment,
            question_code=code,
            value=new_value,
            comment=new_comment,
            changed_by=actor,
            vendor_link=vendor_link,
            channel=channel,
        )
        changed[code] = new_value
    if changed:
        assessment.save(update_fields=["updated_at"])
        audit_record(
            organization=assessment.organization,
            assessment=assessment,
            action="answers.saved",
            actor=actor,
            vendor_link=vendor_link,
            channel=channel,
            detail={"codes": sorted(changed)},
        )
    return changed


# -- evidence ------------------------------------------------------------------------------

ACCEPTED_EVIDENCE_TYPES = {
    "text/plain",
    "application/gzip",
    "application/pdf",
    "image/png",
    "image/jpeg",
    "application/json",
}


PRODUCED_BY_AVIA_MESSAGE = gettext_noop(
    "AVIA attaches this evidence itself (the isolation probe's result); it cannot be uploaded "
    "or removed."
)


def is_avia_itself(*, actor: User | None, vendor_link: VendorLink | None, channel: str) -> bool:
    """Whether a write comes from AVIA itself (a finished probe attaching its result), not
    from a person: no member, no vendor link, the system channel (never a request's)."""
    return channel == Channel.SYSTEM and actor is None and vendor_link is None


@transaction.atomic
def evidence_add(
    *,
    assessment: Assessment,
    question_code: str,
    upload: UploadedFile,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
    channel: str,
) -> EvidenceFile:
    """Store an evidence file privately and parse it. A file the parser cannot read is kept
    and marked "not parsed"; only files of a refused type or over the size limit are refused.

    A question whose evidence AVIA produces (the isolation probe's result) takes a file from
    AVIA itself only — `channel=SYSTEM`, no person, no vendor link — and takes it in any status,
    since AVIA measured it; everyone else (portal, pages, API) is refused."""
    from scoring.evidence import parse_evidence

    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    spec = assessment.questionnaire.spec
    question = spec.questions.get(question_code or "")
    errors: dict[str, list[Any]] = {}
    if question is None or question.type != "file":
        readable_code = (
            question_code and len(question_code) <= 20 and not text_errors(question_code)
        )
        errors[question_code if readable_code else "question"] = [
            _("This question does not take evidence files.")
        ]
    elif question.produced_by_avia:
        if not is_avia_itself(actor=actor, vendor_link=vendor_link, channel=channel):
            raise ServiceError({question_code: [_(PRODUCED_BY_AVIA_MESSAGE)]})
    else:
        allowed = editable_codes(assessment, vendor_link)
        if allowed is not None and question_code not in allowed:
            errors[question_code] = [_("This question cannot be answered here.")]
    produced_by_avia = question is not None and question.produced_by_avia
    if assessment.status not in lifecycle.EDITABLE_STATUSES and not produced_by_avia:
        raise ConflictError(
            {
                "status": [
                    _("Evidence cannot be added while the assessment is %(status)s.")
                    % {"status": AssessmentStatus(assessment.status).label}
                ]
            }
        )
    limit = settings.EVIDENCE_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        errors.setdefault(question_code or "file", []).append(
            _("The file is %(size)s MB; the limit is %(limit)s MB.")
            % {"size": round(upload.size / 1_048_576, 1), "limit": limit // 1_048_576}
        )
    if upload.size == 0:
        errors.setdefault(question_code or "file", []).append(_("The file is empty."))
    if errors:
        raise ServiceError(errors)
    head = upload.read(8192)
    upload.seek(0)
    content_type = sniff_content_type(head)
    if content_type not in ACCEPTED_EVIDENCE_TYPES:
        raise ServiceError(
            {
                question_code: [
                    _(
                        "Files of this type (%(type)s) are not accepted as evidence; upload a "
                        "text log, a gzip-compressed log, a PDF or an image."
                    )
                    % {"type": content_type}
                ]
            }
        )
    storage = evidence_storage()
    # A "../../x" or "C:\\x" name is reduced to its last part; files are stored under a
    # random name in any case, the original name is only shown.
    original_name = readable_name(upload.name or "", max_length=255, default="evidence")
    try:
        stored = store_upload(
            upload, storage=storage, directory=str(assessment.organization_id), max_bytes=limit
        )
    except UploadTooLarge:
        raise ServiceError(
            {
                question_code: [
                    _("The file is larger than %(limit)s MB.") % {"limit": limit // 1_048_576}
                ]
            }
        ) from None
    except OSError as exc:
        logger.error("evidence upload not stored: %s", exc)
        raise StorageFullError(
            {
                question_code: [
                    _(
                        "The file could not be stored (the server's disk may be full); nothing was saved. Please try again later."
                    )
                ]
            }
        ) from exc
    # The file is written before its row: if parsing or the row fails, remove the file again.
    try:
        with storage.open(stored.name, "rb") as handle:
            result = parse_evidence(
                handle, parser=question.parser, source_name=original_name, max_bytes=limit
            )
        evidence = EvidenceFile.objects.create(
            assessment=assessment,
            question_code=question_code,
            original_name=original_name,
            storage_name=stored.name,
            size=stored.size,
            sha256=stored.sha256,
            content_type=content_type,
            parsed=result.parsed,
            parse_result=result.to_dict(),
            uploaded_by=actor,
            channel=channel,
        )
        audit_record(
            organization=assessment.organization,
            assessment=assessment,
            action="evidence.uploaded",
            actor=actor,
            vendor_link=vendor_link,
            channel=channel,
            detail={
                "question": question_code,
                "file": original_name,
                "parsed": result.parsed,
                "sha256": evidence.sha256,
            },
        )
    except BaseException:
        storage.delete(stored.name)
        raise
    return evidence


@transaction.atomic
def evidence_remove(
    *, evidence: EvidenceFile, actor: User | None, vendor_link: VendorLink | None, channel: str
) -> None:
    assessment = Assessment.objects.select_for_update().get(pk=evidence.assessment_id)
    question = assessment.questionnaire.spec.questions.get(evidence.question_code)
    if question is not None and question.produced_by_avia:
        raise ServiceError({evidence.question_code: [_(PRODUCED_BY_AVIA_MESSAGE)]})
    if assessment.status not in lifecycle.EDITABLE_STATUSES:
        raise ConflictError({"status": [_("Evidence cannot be removed now.")]})
    allowed = editable_codes(assessment, vendor_link)
    if allowed is not None and evidence.question_code not in allowed:
        raise ConflictError({evidence.question_code: [_("This question cannot be answered here.")]})
    name, storage_name = evidence.original_name, evidence.storage_name
    evidence.delete()
    transaction.on_commit(lambda: evidence_storage().delete(storage_name))
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="evidence.removed",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
        detail={"file": name},
    )


# -- vendor links --------------------------------------------------------------------------


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
) -> tuple[VendorLink, str]:
    """Invite a vendor contact: a new private link (the token is returned once and emailed),
    replacing any earlier active link to the same address unless `replace=False`.
    `invitation=False`: the caller sends its own email with the link (a reminder, a
    reassessment, a request for changes). `member=None`: AVIA itself issues the link, as part
    of a workflow email (`vendor_mail`)."""
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_email

    if member is not None:
        _require_member(member, assessment, Capability.INVITE_VENDOR)
    actor = member.user if member is not None else None
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
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
    _transition(assessment, "invite")
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
    _require_member(member, link.assessment, Capability.INVITE_VENDOR)
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


# -- submission and scoring ----------------------------------------------------------------


@transaction.atomic
def assessment_submit(
    *,
    assessment: Assessment,
    channel: str,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
) -> ScoringRun:
    """Submit the answers and queue a scoring run. A vendor link checks the vendor's sections;
    a member checks every section."""
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    spec = assessment.questionnaire.spec
    sections = None if vendor_link is None else {s.code for s in spec.sections if s.vendor_facing}
    evidence_codes = set(assessment.evidence.values_list("question_code", flat=True))
    missing = missing_required(
        spec, answer_values(assessment), sections=sections, evidence_codes=evidence_codes
    )
    if missing:
        raise ServiceError({code: [_("This question is required.")] for code in missing})
    _transition(assessment, "submit")
    assessment.submitted_at = timezone.now()
    assessment.save(update_fields=["status", "submitted_at", "updated_at"])
    assessment.answers.filter(reopened=True).update(reopened=False)
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="assessment.submitted",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
    )
    return _queue_run(assessment, requested_by=actor)


@transaction.atomic
def assessment_rescore(*, assessment: Assessment, member: OrgContext, channel: str) -> ScoringRun:
    """Score again with the newest ruleset; earlier runs stay as they were."""
    _require_member(member, assessment, Capability.EDIT_ASSESSMENT)
    actor = member.user
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    _transition(assessment, "rescore")
    assessment.save(update_fields=["status", "updated_at"])
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="assessment.rescore_requested",
        actor=actor,
        channel=channel,
    )
    return _queue_run(assessment, requested_by=actor)


def newest_ruleset_for(assessment: Assessment) -> Ruleset:
    # The newest ruleset that scores this questionnaire version (v2 also scores v1 answers).
    rulesets = list(Ruleset.objects.filter(applies_to=assessment.questionnaire))
    if not rulesets:
        raise ServiceError({"ruleset": [_("No ruleset is loaded for this questionnaire.")]})
    return max(rulesets, key=lambda r: version_key(r.version))


def _queue_run(assessment: Assessment, *, requested_by: User | None) -> ScoringRun:
    from .tasks import score_assessment_run

    run = scoring_run_create(
        assessment=assessment, ruleset=newest_ruleset_for(assessment), requested_by=requested_by
    )
    publish_on_commit(score_assessment_run, run.pk)
    return run


def scoring_run_create(
    *, assessment: Assessment, ruleset: Ruleset, requested_by: User | None
) -> ScoringRun:
    """A queued run of `ruleset` over the assessment's answers, for the caller to carry out
    (`scoring_run_execute`): the scoring task, or a rescore batch's chunk."""
    return ScoringRun.objects.create(
        assessment=assessment,
        ruleset=ruleset,
        # Date rules (e.g. "pentest more than 365 days before submission") read the submission date.
        as_of=timezone.localdate(assessment.submitted_at)
        if assessment.submitted_at
        else timezone.localdate(),
        requested_by=requested_by,
    )


# -- review --------------------------------------------------------------------------------


def reviewer_conflict(*, assessment: Assessment, reviewer: User) -> bool:
    """Four eyes: a reviewer may not decide on an assessment they created, submitted or edited
    (uploading or removing evidence is editing: a startup log decides findings)."""
    if assessment.created_by_id == reviewer.pk:
        return True
    if assessment.answer_revisions.filter(changed_by=reviewer).exists():
        return True
    return assessment.audit_events.filter(
        actor=reviewer,
        action__in=("assessment.submitted", "evidence.uploaded", "evidence.removed"),
    ).exists()


@transaction.atomic
def review_record(
    *,
    assessment: Assessment,
    member: OrgContext,
    decision: str,
    channel: str,
    conditions: str = "",
    message: str = "",
    reopen_codes: list[str] | None = None,
) -> Review:
    """Sign off (or send back) a scored assessment: a reviewer who took no part decides."""
    _require_member(member, assessment, Capability.REVIEW)
    reviewer = member.user
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    errors: dict[str, list[Any]] = text_fields_errors(
        {"conditions": (conditions, 4000), "message": (message, 4000)}
    )
    if decision not in ReviewDecision.values:
        errors["decision"] = [
            _("Choose approve, approve with conditions, reject or request changes.")
        ]
    if decision == ReviewDecision.APPROVED_WITH_CONDITIONS and not conditions.strip():
        errors.setdefault("conditions", []).append(_("State the conditions of the approval."))
    spec = assessment.questionnaire.spec
    reopen = list(dict.fromkeys(reopen_codes or []))
    if decision == ReviewDecision.CHANGES_REQUESTED:
        vendor_codes = vendor_question_codes(spec)
        unknown = [code for code in reopen if code not in vendor_codes]
        if not reopen:
            errors["reopen_codes"] = [_("Choose the questions the vendor should answer again.")]
        elif unknown:
            errors["reopen_codes"] = [
                _("Not vendor questions: %(codes)s.") % {"codes": ", ".join(unknown)}
            ]
        if not message.strip():
            errors.setdefault("message", []).append(_("Tell the vendor what to change."))
    if reviewer_conflict(assessment=assessment, reviewer=reviewer):
        errors["reviewer"] = [
            _(
                "You created, edited or submitted this assessment: another reviewer must decide (four-eyes rule)."
            )
        ]
    if assessment.latest_run is None:
        errors.setdefault("status", []).append(_("The assessment has not been scored yet."))
    if errors:
        raise ServiceError(errors)
    event = {
        ReviewDecision.APPROVED: "approve",
        ReviewDecision.APPROVED_WITH_CONDITIONS: "approve",
        ReviewDecision.REJECTED: "reject",
        ReviewDecision.CHANGES_REQUESTED: "request_changes",
    }[decision]
    _transition(assessment, event)
    assessment.save(update_fields=["status", "updated_at"])
    review = Review.objects.create(
        assessment=assessment,
        run=assessment.latest_run,
        reviewer=reviewer,
        decision=decision,
        conditions=conditions.strip(),
        message=message.strip(),
        reopened_codes=reopen,
    )
    if decision == ReviewDecision.CHANGES_REQUESTED:
        from .vendor_mail import changes_requested_notify

        changes_requested_notify(review=review)
    # The next assessment is due from the approval; none after a rejection or while changing.
    from .reassessment import reassess_by_for

    assessment.reassess_by = reassess_by_for(assessment)
    assessment.save(update_fields=["reassess_by", "updated_at"])
    if reopen:
        for code in reopen:
            Answer.objects.update_or_create(
                assessment=assessment, question_code=code, defaults={"reopened": True}
            )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action=f"review.{decision}",
        actor=reviewer,
        channel=channel,
        detail={"conditions": review.conditions, "reopened": reopen},
    )
    return review


@transaction.atomic
def risk_decision_record(
    *,
    assessment: Assessment,
    rule_id: str,
    kind: str,
    justification: str,
    owner: str,
    expires_on: dt.date | None,
    member: OrgContext,
    channel: str,
) -> RiskDecision:
    _require_member(member, assessment, Capability.EDIT_ASSESSMENT)
    actor = member.user
    errors: dict[str, list[Any]] = text_fields_errors(
        {"justification": (justification, 4000), "owner": (owner, 200)}
    )
    run = assessment.latest_run
    if run is None or not run.findings.filter(rule_id=rule_id).exists():
        errors["rule_id"] = [_("This rule has no finding in the latest scoring run.")]
    if not justification.strip():
        errors.setdefault("justification", []).append(_("Give the justification."))
    if not owner.strip():
        errors.setdefault("owner", []).append(_("Name the owner of this decision."))
    if expires_on is None:
        errors["expires_on"] = [_("Give an expiry date.")]
    elif expires_on <= timezone.localdate():
        errors["expires_on"] = [_("The expiry date must be in the future.")]
    if errors:
        raise ServiceError(errors)
    decision = RiskDecision.objects.create(
        assessment=assessment,
        rule_id=rule_id,
        kind=kind,
        justification=justification.strip(),
        owner=owner.strip(),
        expires_on=expires_on,
        created_by=actor,
    )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action=f"risk_decision.{kind}",
        actor=actor,
        channel=channel,
        detail={
            "rule": rule_id,
            "owner": decision.owner,
            "expires_on": expires_on.isoformat() if expires_on else None,
        },
    )
    return decision


__all__ = [
    "Channel",
    "ConflictError",
    "ServiceError",
    "answers_save",
    "assessment_create",
    "assessment_rescore",
    "assessment_submit",
    "evidence_add",
    "review_record",
    "vendor_create",
    "vendor_link_issue",
    "vendor_link_resolve",
    "vendor_link_revoke",
]
