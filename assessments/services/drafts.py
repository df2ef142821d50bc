"""Drafts: what a vendor or a member typed and has not saved yet, kept as typed.

A draft may hold a value that is not a valid answer ("1M" for a number of tokens); it is shown
back with what is wrong with it, and it never reaches scoring. Saving the answers (validated,
all or nothing: `services.answers_save`) removes the drafts of what it saved. So nothing typed
is lost to a link, an upload, a reload or a closed tab, and the line between a draft and a
saved answer stays visible.

The same rules as for answers decide who may keep a draft of which question: the vendor link's
editable questions, the member's role per section, and only while answers may still change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.text import storable
from questionnaires.labels import shown_value
from questionnaires.validation import TEXT_MAX_LENGTH, clean_answer, is_blank

from ..models import Answer, AnswerDraft, Assessment, VendorLink
from .answers import (
    answer_values,
    editable_codes,
    require_answer_capabilities,
    require_answers_open,
)

MAX_CHOICES = 100  # more options than any question has: a crafted request


def _raw(value: Any) -> str | list[str] | None:
    """A typed value as it is kept: text, or a list of option codes. A NUL typed (refused as
    an answer, with its message) is kept storable, so the rest of what was typed is not lost."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [storable(str(item)) for item in value]
    return storable(str(value))


@transaction.atomic
def drafts_save(
    *,
    assessment: Assessment,
    values: Mapping[str, Any],
    comments: Mapping[str, str] | None = None,
    actor: User | None = None,
    member: OrgContext | None = None,
    vendor_link: VendorLink | None = None,
) -> dict[str, AnswerDraft]:
    """Keep what was typed for these questions; return the drafts that remain.

    A value that reads as the saved answer (and a comment that is the saved comment) is not a
    draft: any draft of it is removed instead."""
    comments = comments or {}
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    require_answers_open(assessment)
    spec = assessment.questionnaire.spec
    codes = {*values, *comments}
    if member is not None:
        require_answer_capabilities(member=member, questionnaire=spec, codes=codes)
    allowed = editable_codes(assessment, vendor_link)
    errors: dict[str, list[Any]] = {}
    for code in sorted(codes):
        raw = _raw(values.get(code))
        if code not in spec.questions or (allowed is not None and code not in allowed):
            errors[code] = [_("This question cannot be answered here.")]
        elif len(str(raw or "")) > TEXT_MAX_LENGTH or len(comments.get(code, "")) > TEXT_MAX_LENGTH:
            errors[code] = [_("Use at most %(limit)s characters.") % {"limit": TEXT_MAX_LENGTH}]
        elif isinstance(raw, list) and len(raw) > MAX_CHOICES:
            errors[code] = [_("Choose fewer options.")]
    if errors:
        raise ServiceError(errors)

    saved_values = answer_values(assessment)
    saved = {a.question_code: a for a in Answer.objects.filter(assessment=assessment)}
    existing = {d.question_code: d for d in assessment.drafts.filter(question_code__in=codes)}
    for code in codes:
        question = spec.questions[code]
        draft = existing.get(code) or AnswerDraft(assessment=assessment, question_code=code)
        if code in values:
            draft.value = _raw(values[code])
        elif draft.pk is None:
            # Only the comment was typed: the draft starts from the saved answer.
            draft.value = _raw(shown_value(question, saved_values.get(code)))
        if code in comments:
            draft.comment = storable(comments[code].strip())
        elif draft.pk is None:
            draft.comment = saved[code].comment if code in saved else ""
        if _same_as_saved(question, draft, saved_values.get(code), saved.get(code)):
            if draft.pk is not None:
                draft.delete()
            existing.pop(code, None)
            continue
        draft.updated_by = actor or (member.user if member else None)
        draft.vendor_link = vendor_link
        draft.save()
        existing[code] = draft
    return existing


def _same_as_saved(
    question: Any, draft: AnswerDraft, saved_value: Any, saved: Answer | None
) -> bool:
    if draft.comment != (saved.comment if saved else ""):
        return False
    if question.type == "file":
        return True
    if is_blank(draft.value):
        return saved_value is None
    try:
        return clean_answer(question, draft.value) == saved_value
    except ValueError:
        return False


def drafts_for(*, assessment: Assessment) -> dict[str, AnswerDraft]:
    """The assessment's drafts by question code (the assessment was fetched within its
    organization or through its vendor link)."""
    return {d.question_code: d for d in assessment.drafts.all()}
