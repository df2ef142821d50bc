"""Assessments and their answers: an assessment created (with its first answers), answers saved
all or nothing, and which questions the caller (a member's role, a vendor link) may change now."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from accounts.models import Organization, User
from accounts.tenancy import OrgContext
from core.db import lock_row
from core.errors import ConflictError, ForbiddenError, ServiceError
from core.text import text_fields_errors
from questionnaires.selectors import questionnaire_visible
from questionnaires.spec import QuestionnaireSpec
from questionnaires.validation import (
    AnswerValidationError,
    hidden_codes,
    stored_values,
    validate_answers,
    visibility_for,
)

from .. import lifecycle
from ..audit import audit_record
from ..models import (
    Answer,
    AnswerRevision,
    Assessment,
    AssessmentStatus,
    ReviewDecision,
    Vendor,
    VendorLink,
)


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
    label: str = "",
) -> Assessment:
    slug, _sep, version = questionnaire_key.partition("@")
    # Only what the organization may use: shipped, its own, or shared with it (else unknown).
    questionnaire = questionnaire_visible(organization=organization, slug=slug, version=version)
    errors: dict[str, list[Any]] = {}
    if questionnaire is None:
        errors["questionnaire"] = [
            _("Unknown questionnaire “%(key)s”.") % {"key": questionnaire_key}
        ]
    if vendor.organization_id != organization.pk:
        errors["vendor"] = [_("Unknown vendor.")]
    errors.update(text_fields_errors({"label": (label, LABEL_MAX)}))
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
        number=_next_number(organization),
        label=label.strip(),
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
    *,
    assessment: Assessment,
    actor: User,
    channel: str,
    due_date: dt.date | None,
    label: str | None = None,
) -> Assessment:
    """The due date and (unless None) the label."""
    if label is not None:
        errors = text_fields_errors({"label": (label, LABEL_MAX)})
        if errors:
            raise ServiceError(errors)
        assessment.label = label.strip()
    assessment.due_date = due_date
    assessment.save(update_fields=["due_date", "label", "updated_at"])
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="assessment.updated",
        actor=actor,
        channel=channel,
        detail={"due_date": due_date.isoformat() if due_date else None, "label": assessment.label},
    )
    return assessment


LABEL_MAX = Assessment._meta.get_field("label").max_length


def _next_number(organization: Organization) -> int:
    """The organization's next assessment number: one more than its highest, taken under the
    organization row's lock so that two assessments created at once get different ones."""
    lock_row(Organization, organization.pk)
    highest = Assessment.objects.filter(organization=organization).aggregate(top=Max("number"))
    return (highest["top"] or 0) + 1


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
        review = (
            assessment.reviews.filter(decision=ReviewDecision.CHANGES_REQUESTED)
            .values_list("reopened_codes", "run__answers_snapshot")
            .first()
        )
        reopened_blank, reviewed = review or ([], {})
        codes |= set(reopened_blank or []) & vendor_question_codes(spec)
        reviewed = reviewed or {}
        # A changed answer may open questions that were not asked before (PRF-07 now "yes"
        # asks PRF-08): those the reviewed run had no answer to are the vendor's to answer
        # too, or it could never submit again. Those it had stay as the reviewer left them.
        opened = visibility_for(spec).follow_ups(codes) & vendor_question_codes(spec)
        codes |= {code for code in opened if reviewed.get(code) is None}
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
