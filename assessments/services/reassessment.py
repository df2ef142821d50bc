"""Reassessment cycles: when a vendor is due to be assessed again, and the renewal that starts
the next assessment from the last answers.

The due date (`Assessment.reassess_by`) follows the organization's policy by tier: set when an
assessment is scored (from the day it was scored) and again when it is approved (from the day
of the decision). A renewal clones the answers, comments and evidence files into a new draft of
the newest version of the questionnaire, for the vendor to confirm or change. A configuration
change the vendor declares (weights, quantization, parallelism, memory: any of them can shrink
the KV-cache pool below the advertised context, as in the incident) starts a renewal without
the CTX answers and the startup log, so both must be given again.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from accounts.models import Organization
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ConflictError, ForbiddenError, ServiceError, StorageUnavailableError
from core.storage import STORAGE_ERRORS, delete_quietly, write_atomically
from core.text import text_errors
from questionnaires.models import QuestionnaireVersion
from questionnaires.selectors import questionnaires_visible_to
from questionnaires.spec import version_key
from questionnaires.validation import AnswerValidationError, validate_answers

from ..audit import audit_record
from ..models import (
    RENEWABLE_STATUSES,
    Assessment,
    AssessmentStatus,
    ConfigurationChange,
    EvidenceFile,
    ReassessmentPolicy,
    RenewalReason,
    Review,
    ReviewDecision,
    RiskTier,
    Vendor,
    VendorLink,
)
from ..storage import evidence_storage
from .answers import answers_save, assessment_create
from .guards import require_member
from .notices import notify_configuration_change
from .vendor_mail import renewal_notify

logger = logging.getLogger(__name__)

# The section a configuration change reopens: the context window and the KV-cache pool that
# serves it, with the startup log that proves the pool's size.
RECHECKED_SECTION = "CTX"
MAX_DAYS = 3650
# A renewal opened by a configuration change (or for a vendor with no next date) gives the
# vendor this long to answer; a late periodic one keeps the date it was due (`renewal_start`).
RENEWAL_ANSWER_DAYS = 30

# -- the policy ----------------------------------------------------------------------------


def reassessment_policy_for(*, organization: Organization) -> ReassessmentPolicy:
    """The organization's policy (the defaults, unsaved, until the owner changes them)."""
    return ReassessmentPolicy.objects.filter(organization=organization).first() or (
        ReassessmentPolicy(organization=organization)
    )


@transaction.atomic
def reassessment_policy_update(
    *, member: OrgContext, days: Mapping[str, Any], channel: str
) -> ReassessmentPolicy:
    """Set the days by tier (`{"critical": 90, ...}`); the owner's decision. Applies to
    assessments scored or approved from now on."""
    if not member.can(Capability.MANAGE_POLICY):
        raise ForbiddenError({"policy": [_("Only the owner sets the reassessment policy.")]})
    errors: dict[str, list[Any]] = {}
    clean: dict[str, int] = {}
    for tier in RiskTier.values:
        raw = days.get(tier)
        try:
            value = int(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            errors[tier] = [_("Enter a whole number of days.")]
            continue
        if not 1 <= value <= MAX_DAYS:
            errors[tier] = [_("Enter between 1 and %(max)s days.") % {"max": MAX_DAYS}]
        clean[tier] = value
    if errors:
        raise ServiceError(errors)
    policy = reassessment_policy_for(organization=member.organization)
    for tier, value in clean.items():
        setattr(policy, f"{tier}_days", value)
    policy.updated_by = member.user
    policy.save()
    audit_record(
        organization=member.organization,
        action="reassessment_policy.updated",
        actor=member.user,
        channel=channel,
        detail=clean,
    )
    return policy


def last_approvals(assessment_ids: Iterable[int]) -> dict[int, dt.datetime]:
    """When each assessment was last approved (with or without conditions), by id; one query
    for any number of assessments."""
    rows = (
        Review.objects.filter(
            assessment_id__in=list(assessment_ids),
            decision__in=[ReviewDecision.APPROVED, ReviewDecision.APPROVED_WITH_CONDITIONS],
        )
        .values("assessment_id")
        .annotate(last=Max("created_at"))
        .order_by()
    )
    return {row["assessment_id"]: row["last"] for row in rows}


def reassess_by_for(
    assessment: Assessment,
    *,
    policy: ReassessmentPolicy | None = None,
    approvals: Mapping[int, dt.datetime] | None = None,
) -> dt.date | None:
    """When the assessment's vendor is due again: from the approval, or from the scoring of an
    assessment not decided yet; none for other statuses (rejected, being changed). A batch
    passes its organization's `policy` and the `approvals` of its assessments
    (`last_approvals`), each read once."""
    # On the organization's clock: a worker scoring it runs on the server's.
    clock = assessment.organization
    if assessment.status == AssessmentStatus.APPROVED:
        if approvals is None:
            approvals = last_approvals([assessment.pk])
        basis = clock.local_date(approvals.get(assessment.pk))
    elif assessment.status == AssessmentStatus.SCORED and assessment.latest_run is not None:
        basis = clock.local_date(assessment.latest_run.finished_at)
    else:
        return None
    policy = policy or reassessment_policy_for(organization=assessment.organization)
    days = policy.days_for(assessment.risk_tier)
    return basis + dt.timedelta(days=days) if days else None


# -- renewals ------------------------------------------------------------------------------


FINAL_STATUSES = (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED)


def open_renewal_of(assessment: Assessment) -> Assessment | None:
    return assessment.renewals.exclude(status__in=FINAL_STATUSES).order_by("-pk").first()


@transaction.atomic
def renewal_start(
    *,
    assessment: Assessment,
    reason: str,
    channel: str,
    member: OrgContext | None = None,
    vendor_link: VendorLink | None = None,
    changes: Iterable[str] = (),
    note: str = "",
) -> Assessment:
    """Open the next assessment of the vendor as a draft holding the last answers.

    `member` is an assessor, `vendor_link` a vendor declaring a configuration change through
    its link; neither is the reminder sweep. Refused while another renewal is open."""
    if member is not None:
        require_member(member, assessment, Capability.EDIT_ASSESSMENT)
    if vendor_link is not None and vendor_link.assessment_id != assessment.pk:
        raise ServiceError({"assessment": [_("Unknown assessment.")]})
    actor = member.user if member is not None else None
    original = Assessment.objects.select_for_update().get(pk=assessment.pk)
    errors: dict[str, list[Any]] = {}
    changes = list(dict.fromkeys(changes))
    if reason not in RenewalReason.values:
        errors["reason"] = [_("Unknown reason for a reassessment.")]
    if reason == RenewalReason.CONFIGURATION_CHANGE:
        unknown = [c for c in changes if c not in ConfigurationChange.values]
        if not changes:
            errors["changes"] = [_("Choose what changed in the deployment.")]
        elif unknown:
            errors["changes"] = [_("Unknown changes: %(codes)s.") % {"codes": ", ".join(unknown)}]
    if note_errors := text_errors(note, max_length=4000):
        errors["note"] = note_errors
    if errors:
        raise ServiceError(errors)
    if original.status not in RENEWABLE_STATUSES:
        raise ConflictError(
            {"status": [_("Only a scored or approved assessment can be reassessed.")]}
        )
    # One open renewal per vendor and questionnaire, whichever of its assessments it renews:
    # the vendor's row is locked, so two requests at once cannot both find none.
    Vendor.objects.select_for_update().filter(pk=original.vendor_id).first()
    already = open_renewal_of(original) or _open_renewal_of_vendor(original)
    if already is not None:
        raise ConflictError(
            {
                "status": [
                    _("A reassessment of this vendor is already open (assessment %(id)s).")
                    % {"id": already.pk}
                ]
            }
        )
    # Every renewal of it has ended (above): the newest assessment of the vendor is that
    # renewal's line, not this one, whose answers it replaced (a stale page, an earlier link).
    renewed = original.renewals.order_by("-pk").values_list("pk", flat=True).first()
    if renewed is not None:
        raise ConflictError(
            {
                "status": [
                    _(
                        "Assessment %(id)s already reassessed this one: a reassessment starts "
                        "from the newest assessment."
                    )
                    % {"id": renewed}
                ]
            }
        )
    questionnaire = _newest_version_of(original.questionnaire, original.organization)
    recheck = reason == RenewalReason.CONFIGURATION_CHANGE
    keep = {
        code
        for code, question in questionnaire.spec.questions.items()
        if not (recheck and question.section == RECHECKED_SECTION)
    }
    answers = {a.question_code: a for a in original.answers.all() if a.question_code in keep}
    values = {code: a.value for code, a in answers.items() if a.value is not None}
    comments = {code: a.comment for code, a in answers.items() if a.comment}
    values, comments = _still_valid(questionnaire, values, comments)
    today = original.organization.local_date()  # the sweep runs on the server's clock
    # A periodic renewal is due when the vendor was due, even when it opens late: it is then
    # late from the start (and says since when), rather than given a fresh date silently.
    due = original.reassess_by if reason == RenewalReason.DUE else None
    late = due is not None and due < today
    renewal = assessment_create(
        organization=original.organization,
        vendor=original.vendor,
        questionnaire_key=questionnaire.key,
        actor=actor,  # type: ignore[arg-type]  # None: the reminder sweep
        channel=channel,
        due_date=due or today + dt.timedelta(days=RENEWAL_ANSWER_DAYS),
    )
    if values or comments:
        answers_save(
            assessment=renewal, answers=values, comments=comments, actor=actor, channel=channel
        )
    renewal.renewal_of = original
    renewal.renewal_reason = reason
    original.renewed = True
    original.save(update_fields=["renewed", "updated_at"])
    renewal.configuration_change = {"changes": changes, "note": note.strip()} if recheck else {}
    renewal.save(update_fields=["renewal_of", "renewal_reason", "configuration_change"])
    copied = _copy_evidence(original, renewal, keep)
    audit_record(
        organization=original.organization,
        assessment=original,
        action="assessment.renewal_started",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
        detail={
            "renewal": renewal.pk,
            "reason": reason,
            "changes": changes,
            "answers": len(values),
            "evidence": copied,
            "due": renewal.due_date.isoformat() if renewal.due_date else None,
            "late": late,
        },
    )
    renewal_notify(renewal=renewal, declared_by=vendor_link)
    if recheck and vendor_link is not None:  # a member who recorded it knows already
        notify_configuration_change(renewal=renewal, changes=changes)
    renewal.refresh_from_db()  # invited: sent
    return renewal


def _open_renewal_of_vendor(original: Assessment) -> Assessment | None:
    """An open renewal of another assessment of the same vendor and questionnaire."""
    return (
        Assessment.objects.filter(
            vendor_id=original.vendor_id,
            questionnaire__slug=original.questionnaire.slug,
            renewal_of__isnull=False,
        )
        .exclude(status__in=FINAL_STATUSES)
        .order_by("-pk")
        .first()
    )


def _newest_version_of(
    questionnaire: QuestionnaireVersion, organization: Organization
) -> QuestionnaireVersion:
    """The newest version of the questionnaire the organization may use (the same owner's: a
    custom questionnaire's newer versions are its owner's); the renewed one itself when no other
    is visible (a share revoked since: the renewal continues on the version it had)."""
    versions = questionnaires_visible_to(organization=organization).filter(
        slug=questionnaire.slug, organization=questionnaire.organization_id
    )
    return max([questionnaire, *versions], key=lambda q: version_key(q.version))


def _still_valid(
    questionnaire: QuestionnaireVersion, values: dict[str, Any], comments: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The answers the renewal's questionnaire still accepts (a newer version may have
    tightened a question); the others are left blank for the vendor."""
    try:
        validate_answers(questionnaire.spec, values, comments)
    except AnswerValidationError as exc:
        refused = set(exc.errors)
        values = {code: v for code, v in values.items() if code not in refused}
        comments = {code: c for code, c in comments.items() if code not in refused}
    return values, comments


def _copy_evidence(original: Assessment, renewal: Assessment, codes: set[str]) -> int:
    """Copies, not shared references: removing a file from the renewal (the vendor uploads a
    newer log) must not delete the evidence of the assessment already decided."""
    storage = evidence_storage()
    written: list[str] = []
    try:
        for evidence in original.evidence.filter(question_code__in=codes):
            with storage.open(evidence.storage_name, "rb") as source:
                name = write_atomically(
                    storage, f"{renewal.organization_id}/{uuid.uuid4().hex}", source.chunks()
                ).name
            written.append(name)
            _copy_row(evidence, renewal, name)
    except STORAGE_ERRORS as exc:  # a full disk, a store that is away
        logger.error("evidence not copied into the renewal: %s", exc)
        for name in written:
            delete_quietly(storage, name)
        raise StorageUnavailableError(
            {
                "evidence": [
                    _(
                        "The evidence files could not be copied (the file store cannot be "
                        "reached or is full); nothing was saved. Please try again later."
                    )
                ]
            }
        ) from exc
    except BaseException:
        for name in written:  # the transaction rolls the rows back; the files go with them
            delete_quietly(storage, name)
        raise
    return len(written)


def _copy_row(evidence: EvidenceFile, renewal: Assessment, name: str) -> None:
    EvidenceFile.objects.create(
        assessment=renewal,
        question_code=evidence.question_code,
        original_name=evidence.original_name,
        storage_name=name,
        size=evidence.size,
        sha256=evidence.sha256,
        content_type=evidence.content_type,
        parsed=evidence.parsed,
        parse_result=evidence.parse_result,
        uploaded_by=evidence.uploaded_by,
        channel=evidence.channel,
    )
