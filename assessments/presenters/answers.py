"""Answers as a reader reads them — the one presenter of the member pages, the vendor portal
and the PDF appendix.

A question is in one of three states: answered; not answered (a gap); or not applicable,
because an earlier answer hid it (`show_if`) — "Not applicable: because INC-01 = No". The last
two must never look alike: in a procurement document a skipped follow-up is not a gap.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from core.formats import format_date, format_number, list_text
from questionnaires.labels import yes_no_labels
from questionnaires.spec import Question, QuestionnaireSpec
from questionnaires.validation import hidden_codes, is_blank, stored_values, visibility_for

ANSWERED, UNANSWERED, NOT_APPLICABLE = "answered", "unanswered", "not_applicable"


def answer_text(question: Question, value: Any, language: str) -> str:
    """A stored answer in the reader's words: option labels, grouped numbers with their unit,
    dates in the language's format. Blank gives ""."""
    if is_blank(value):
        return ""
    if question.type in ("yes_no", "choice", "multi_choice"):
        labels = option_labels(question, language)
        chosen = value if isinstance(value, list) else [value]
        return list_text([labels.get(str(code), str(code)) for code in chosen], language)
    if question.type == "integer" and isinstance(value, int) and not isinstance(value, bool):
        unit = question.unit_label.get(language) if question.unit_label else ""
        return f"{format_number(value)} {unit}".strip()
    if question.type == "date":
        try:
            day = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
        except ValueError:
            return str(value)
        return format_date(day, language)
    return str(value)


def option_labels(question: Question, language: str) -> dict[str, str]:
    """Option code → its label in `language`, for a yes/no or (multiple) choice question."""
    if question.type == "yes_no":
        return yes_no_labels(language)
    return {option.code: option.label.get(language) for option in question.options}


# The form every `show_if` of the catalogue takes: one question compared with one option.
_SIMPLE_CONDITION = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=)\s*"([^"\\]*)"\s*$')


def condition_text(spec: QuestionnaireSpec, code: str, language: str) -> str:
    """When a conditional question is asked, in words: "Answer only if INC-01 = Yes." ("" for
    a question that is always asked). A condition of another form names the questions it
    reads."""
    question = spec.questions[code]
    if not question.show_if:
        return ""
    by_identifier = {q.identifier: q for q in spec.iter_questions()}
    # One comparison, or several that must all hold (KV-11: KV-06 = Yes and KV-05 = ...).
    matches = [_SIMPLE_CONDITION.match(part) for part in question.show_if.split("&&")]
    with translation.override(language):
        if all(match and match[1] in by_identifier for match in matches):
            conditions = []
            for match in matches:
                assert match is not None
                source = by_identifier[match[1]]
                value = answer_text(source, match[3], language) or match[3]
                sign = "=" if match[2] == "==" else "≠"
                conditions.append(f"{source.code} {sign} {value}")
            # Translators: between two conditions that must both hold ("KV-06 = Yes and ...").
            joined = pgettext("conditions that all hold", " and ").join(conditions)
            return _("Answer only if %(condition)s.") % {"condition": joined}
        codes = [
            by_identifier[name].code
            for name in visibility_for(spec).reads(code)
            if name in by_identifier
        ]
        return _("Answer only if your answers to %(codes)s call for it.") % {
            "codes": list_text(codes, language)
        }


def not_applicable_reason(
    spec: QuestionnaireSpec, code: str, values: Mapping[str, Any], language: str
) -> str:
    """Why a hidden question is not asked: "Not applicable: because INC-01 = No"."""
    by_identifier = {q.identifier: q for q in spec.iter_questions()}
    conditions = []
    for name in visibility_for(spec).reads(code):
        question = by_identifier.get(name)
        if question is None:
            continue
        value = answer_text(question, values.get(question.code), language)
        with translation.override(language):
            # Outside the f-string, where makemessages finds it (it missed it inside).
            missing = _("not answered")
        conditions.append(f"{question.code} = {value or missing}")
    with translation.override(language):
        if not conditions:
            return _("Not applicable")
        return _("Not applicable: because %(conditions)s") % {
            "conditions": list_text(conditions, language)
        }


@dataclass(frozen=True)
class FileRef:
    """An evidence file named beside its question; `evidence_id` when it can be downloaded."""

    name: str
    evidence_id: int | None = None


@dataclass(frozen=True)
class AnswerRow:
    code: str
    question: str
    state: str  # ANSWERED | UNANSWERED | NOT_APPLICABLE
    value: str  # the answer, or why there is none ("Not answered", "Not applicable: …")
    comment: str = ""
    reopened: bool = False
    files: tuple[FileRef, ...] = ()
    verbatim: bool = False  # the value is what someone typed (text, a version): never translated

    @property
    def answered(self) -> bool:
        return self.state == ANSWERED

    @property
    def applicable(self) -> bool:
        return self.state != NOT_APPLICABLE


@dataclass(frozen=True)
class AnswerSection:
    code: str
    title: str
    answered_by: str
    audience: str  # "answered by the vendor" / "answered by the buyer"
    answers: tuple[AnswerRow, ...] = field(default_factory=tuple)


def answer_sections(
    spec: QuestionnaireSpec,
    values: Mapping[str, Any],
    language: str,
    *,
    comments: Mapping[str, str] | None = None,
    reopened: Iterable[str] = (),
    files: Mapping[str, Sequence[FileRef]] | None = None,
    sections: Iterable[str] | None = None,
) -> list[AnswerSection]:
    """Every question of `sections` (default: all) with its answer, comment and files."""
    comments = comments or {}
    files = files or {}
    reopened = set(reopened)
    wanted = set(sections) if sections is not None else None
    values = stored_values(spec, values)  # a run's snapshot holds dates as text
    hidden = hidden_codes(spec, values)
    with translation.override(language):
        not_answered = _("Not answered")
        audiences = {"vendor": _("answered by the vendor"), "buyer": _("answered by the buyer")}
    result = []
    for section in spec.sections:
        if wanted is not None and section.code not in wanted:
            continue
        rows = []
        for question in section.questions:
            code = question.code
            question_files = tuple(files.get(code, ()))
            if code in hidden:
                state, value = NOT_APPLICABLE, not_applicable_reason(spec, code, values, language)
            elif question.type == "file":
                names = [f.name for f in question_files]
                state = ANSWERED if names else UNANSWERED
                value = list_text(names, language) if names else not_answered
            else:
                text = answer_text(question, values.get(code), language)
                state, value = (ANSWERED, text) if text else (UNANSWERED, not_answered)
            rows.append(
                AnswerRow(
                    code=code,
                    question=question.text.get(language),
                    state=state,
                    value=value,
                    comment=comments.get(code, ""),
                    reopened=code in reopened,
                    files=question_files,
                    verbatim=state == ANSWERED and question.type in ("text", "version", "file"),
                )
            )
        result.append(
            AnswerSection(
                code=section.code,
                title=section.title.get(language),
                answered_by=section.answered_by,
                audience=audiences.get(section.answered_by, section.answered_by),
                answers=tuple(rows),
            )
        )
    return result
