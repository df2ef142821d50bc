"""How far each section is answered — the member's progress block and the vendor's landing and
review pages read the same numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from questionnaires.spec import Question, QuestionnaireSpec
from questionnaires.validation import hidden_codes, is_blank, missing_required


@dataclass(frozen=True)
class SectionProgress:
    """Required questions answered of those asked, and any answers at all of those asked."""

    code: str
    title: str
    answered_by: str
    answered: int
    required: int
    answered_any: int
    asked: int
    url: str = ""

    @property
    def complete(self) -> bool:
        return self.answered >= self.required

    @property
    def percent(self) -> int:
        return round(100 * self.answered / self.required) if self.required else 100


def section_progress(
    spec: QuestionnaireSpec,
    values: Mapping[str, Any],
    evidence_codes: Iterable[str],
    language: str,
    *,
    sections: Iterable[str] | None = None,
    url_for: Callable[[str], str] | None = None,
) -> list[SectionProgress]:
    """One row per section of `sections` (default: all), in questionnaire order."""
    evidence_codes = set(evidence_codes)
    hidden = hidden_codes(spec, values)
    missing = set(missing_required(spec, values, evidence_codes=evidence_codes))
    wanted = set(sections) if sections is not None else None

    def answered(question: Question) -> bool:
        if question.type == "file":
            return question.code in evidence_codes
        return not is_blank(values.get(question.code))

    rows = []
    for section in spec.sections:
        if wanted is not None and section.code not in wanted:
            continue
        asked = [q for q in section.questions if q.code not in hidden]
        required = [q for q in asked if q.required]
        rows.append(
            SectionProgress(
                code=section.code,
                title=section.title.get(language),
                answered_by=section.answered_by,
                answered=len([q for q in required if q.code not in missing]),
                required=len(required),
                answered_any=len([q for q in asked if answered(q)]),
                asked=len(asked),
                url=url_for(section.code) if url_for else "",
            )
        )
    return rows
