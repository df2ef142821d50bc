"""Findings as a reader reads them — the one presenter of the findings page and the PDF.

A finding's evidence is stored as data (`scoring.results.EvidenceItem`); here each item becomes
an `EvidenceLine` in the reader's language: an answer as the member reads it (from the answers
the run scored, not today's), a derived value with its label and unit from the ruleset, or a
log line quoted exactly. The web page and the PDF print the same lines with the same labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from core.formats import format_date, format_datetime, format_line, format_number
from questionnaires.spec import QuestionnaireSpec, Text
from scoring.evidence import probe_outcome_label
from scoring.results import EvidenceItem, EvidenceKind
from scoring.spec import SEVERITIES, FrameworkRef, RulesetSpec

from ..models import Finding, RiskDecision
from .answers import answer_text
from .formats import risk_decision_label, severity_label
from .probe import CHECK_TITLES


@dataclass(frozen=True)
class EvidenceLine:
    """One reason a finding fired."""

    kind: str  # "answer" | "derived" | "log" | "model" | "probe"
    code: str  # the question's code (answer, log, model, probe) or the derived value's name
    # The question's text, the derived value's label, the log file's name, what is read from
    # a model file, or the probe check's name.
    label: str
    # The answer as the reader reads it, the value with its unit, the log line, the model
    # file's figure, or the probe check's outcome.
    value: str
    line: int | None = None
    line_label: str = ""  # "line 42" / "第 42 行"
    evidence_id: int | None = None  # the stored log file, for a download link
    file: str = ""  # the model file's or the probe result's name

    @property
    def text(self) -> str:
        """The line as plain text, for a document that prints it in one paragraph."""
        if self.kind == EvidenceKind.LOG:
            where = ", ".join(part for part in (self.label, self.line_label) if part)
            return f"{self.code} {where}: {self.value}".strip()
        if self.kind == EvidenceKind.ANSWER:
            return f"{self.code} {self.label}: {self.value}"
        if self.kind in (EvidenceKind.MODEL, EvidenceKind.PROBE):
            return f"{self.code} {self.file} · {self.label}: {self.value}"
        return f"{self.label}: {self.value}"


def evidence_lines(
    items: Iterable[Mapping[str, Any]],
    *,
    spec: QuestionnaireSpec,
    ruleset: RulesetSpec,
    answers: Mapping[str, Any],
    language: str,
    evidence_ids: Mapping[tuple[str, str], int] | None = None,
) -> list[EvidenceLine]:
    """The finding's stored evidence items as lines; `answers` are the run's snapshot and
    `evidence_ids` maps (question code, file name) to a stored file."""

    def translated(text: str) -> str:
        with translation.override(language):
            return _(text)

    not_answered = translated(gettext_noop("Not answered"))
    lines = []
    for item in map(EvidenceItem.from_dict, items):
        if item.kind == EvidenceKind.LOG:
            lines.append(
                EvidenceLine(
                    kind=EvidenceKind.LOG,
                    code=item.code,
                    label=item.file,
                    value=item.text,
                    line=item.line,
                    line_label=format_line(item.line, language),
                    evidence_id=(evidence_ids or {}).get((item.code, item.file)),
                )
            )
        elif item.kind == EvidenceKind.PROBE:
            lines.append(
                EvidenceLine(
                    kind=EvidenceKind.PROBE,
                    code=item.code,
                    label=translated(str(CHECK_TITLES.get(item.name, item.name))),
                    value=probe_outcome_label(item.value, translated),
                    file=item.file,
                )
            )
        elif item.kind == EvidenceKind.MODEL:
            per_token = item.values.get("values_per_token")
            lines.append(
                EvidenceLine(
                    kind=EvidenceKind.MODEL,
                    code=item.code,
                    label=translated(gettext_noop("KV values per token")),
                    value=format_number(per_token) if per_token is not None else not_answered,
                    file=item.file,
                )
            )
        elif item.kind == EvidenceKind.ANSWER and (question := spec.questions.get(item.code)):
            shown = answer_text(question, answers.get(question.code), language)
            lines.append(
                EvidenceLine(
                    kind=EvidenceKind.ANSWER,
                    code=question.code,
                    label=question.text.get(language),
                    value=shown or not_answered,
                )
            )
        elif item.kind == EvidenceKind.ANSWER:
            # A question this questionnaire version does not ask (PRB-01 of a v1 assessment
            # that ruleset v2 scores): its answer is blank.
            lines.append(
                EvidenceLine(
                    kind=EvidenceKind.ANSWER,
                    code=item.code,
                    label="",
                    value=not_answered if item.value is None else str(item.value),
                )
            )
        else:
            derived = ruleset.derived_values.get(item.name)
            unit = spec.units.get(derived.unit) if derived and derived.unit else None
            number = item.value
            value = (
                format_number(number)
                if isinstance(number, int) and not isinstance(number, bool)
                else str(number)
            )
            lines.append(
                EvidenceLine(
                    kind=EvidenceKind.DERIVED,
                    code=item.name or item.code,
                    label=derived.label.get(language) if derived and derived.label else item.name,
                    value=f"{value} {unit.get(language)}" if unit else value,
                )
            )
    return lines


@dataclass(frozen=True)
class Reference:
    id: str
    title: str
    as_summarised: bool  # cited from reputable secondary sources, not the primary text


@dataclass(frozen=True)
class RiskDecisionView:
    kind: str
    kind_label: str
    justification: str
    owner: str
    expires_on: str
    recorded_at: str
    recorded_by: str
    expired: bool


@dataclass(frozen=True)
class FindingView:
    rule_id: str
    severity: str
    severity_label: str
    points: int
    section: str
    section_title: str
    title: str
    rationale: str
    remediation: str
    why: tuple[EvidenceLine, ...]
    references: tuple[Reference, ...]
    decisions: tuple[RiskDecisionView, ...]
    framework_ids: tuple[str, ...]

    @property
    def anchor(self) -> str:
        return f"finding-{self.rule_id}"


def finding_views(
    findings: Sequence[Finding],
    *,
    spec: QuestionnaireSpec,
    ruleset: RulesetSpec,
    answers: Mapping[str, Any],
    frameworks: Mapping[str, FrameworkRef],
    language: str,
    decisions: Mapping[str, Sequence[RiskDecision]] | None = None,
    evidence_ids: Mapping[tuple[str, str], int] | None = None,
    today: Any = None,
) -> list[FindingView]:
    """The run's findings in order, each with why it fired, the incident fact it rests on,
    the remediation, the framework clauses it cites and the risk decisions recorded on it."""
    views = []
    for row in findings:
        rule = ruleset.rules_by_id.get(row.rule_id)
        try:
            section_title = spec.section(row.section).title.get(language)
        except KeyError:
            section_title = ""
        views.append(
            FindingView(
                rule_id=row.rule_id,
                severity=row.severity,
                severity_label=severity_label(row.severity, language),
                points=row.points,
                section=row.section,
                section_title=section_title,
                title=rule.title.get(language) if rule else row.rule_id,
                rationale=rule.rationale.get(language) if rule else "",
                remediation=rule.remediation.get(language) if rule else "",
                why=tuple(
                    evidence_lines(
                        row.evidence,
                        spec=spec,
                        ruleset=ruleset,
                        answers=answers,
                        language=language,
                        evidence_ids=evidence_ids,
                    )
                ),
                references=tuple(reference(ref, frameworks, language) for ref in row.references),
                decisions=tuple(
                    risk_decision_view(d, language, today=today)
                    for d in (decisions or {}).get(row.rule_id, ())
                ),
                framework_ids=tuple(row.references),
            )
        )
    return views


def reference(ref_id: str, frameworks: Mapping[str, FrameworkRef], language: str) -> Reference:
    ref = frameworks.get(ref_id) or FrameworkRef(
        id=ref_id, jurisdiction="", family=Text("", ""), title=Text("", ""), confidence="V"
    )
    return Reference(id=ref.id, title=ref.title.get(language), as_summarised=ref.as_summarised)


def risk_decision_view(
    decision: RiskDecision, language: str, *, today: Any = None
) -> RiskDecisionView:
    by = decision.created_by
    return RiskDecisionView(
        kind=decision.kind,
        kind_label=risk_decision_label(decision.kind, language),
        justification=decision.justification,
        owner=decision.owner,
        expires_on=format_date(decision.expires_on, language),
        recorded_at=format_datetime(decision.created_at, language),
        recorded_by=(by.get_full_name() or by.email) if by else "",
        expired=today is not None and decision.expires_on <= today,
    )


@dataclass(frozen=True)
class ScoreExplanation:
    """The formula, applied to one run: points per severity, the sum, the cap and the tier."""

    points: Mapping[str, int]
    counts: Mapping[str, int]
    total: int
    score: int
    tier: str
    tier_reason: str

    @property
    def terms(self) -> list[dict[str, Any]]:
        return [
            {
                "severity": severity,
                "count": self.counts.get(severity, 0),
                "points": self.points[severity],
                "subtotal": self.counts.get(severity, 0) * self.points[severity],
            }
            for severity in SEVERITIES
        ]


def score_explanation(
    *,
    risk_score: int | None,
    risk_tier: str,
    ruleset: RulesetSpec,
    severities: Sequence[str],
    language: str,
) -> ScoreExplanation:
    counts = Counter(severities)
    total = sum(ruleset.points[severity] for severity in severities)
    score = risk_score if risk_score is not None else min(100, total)
    with translation.override(language):
        if counts.get("critical"):
            reason = _("Critical, because at least one critical rule fired.")
        elif counts.get("high"):
            reason = _("High, because at least one high rule fired.")
        elif score >= 30:
            reason = _("High, because the score is 30 or more.")
        elif score >= 10:
            reason = _("Medium, because the score is 10 or more.")
        else:
            reason = _("Low: no critical or high rule fired and the score is below 10.")
    return ScoreExplanation(
        points=ruleset.points,
        counts=counts,
        total=total,
        score=score,
        tier=risk_tier,
        tier_reason=reason,
    )
