"""What a report prints, read from one scoring run and resolved into plain strings.

`report_context()` is the only part of rendering that reads the database. It works from the
run's stored snapshot (its findings, `answers_snapshot`, `evidence_snapshot` and ruleset
version) so that a report of an old run shows that run exactly as it was scored, whatever
happened to the assessment since. Everything is resolved into one language here; the
template then only lays out strings, and `reports.rendering` turns a `ReportContext` into
PDF bytes without touching the database.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from accounts.models import Organization, User
from assessments.models import (
    AnswerRevision,
    Assessment,
    Finding,
    Review,
    RiskDecision,
    ScoringRun,
)
from questionnaires.spec import Question, QuestionnaireSpec
from scoring.engine import EvidenceItem
from scoring.evidence import ENGINE_LABELS
from scoring.models import Framework
from scoring.spec import SEVERITIES, RulesetSpec

from .charts import BarChart, ChartRow, bar_chart
from .labels import (
    HTML_LANG,
    format_date,
    format_datetime,
    format_line,
    format_tokens,
    labels_for,
)

DEFAULT_BRAND_COLOUR = "#0B5CAD"
_BRAND_COLOUR = re.compile(r"^#[0-9A-Fa-f]{6}$")
SEVERITY_COLOURS = {
    "critical": "#8F1D21",
    "high": "#C2410C",
    "medium": "#A16207",
    "low": "#3F6212",
}


# -- the data the template prints ----------------------------------------------------------


@dataclass(frozen=True)
class Branding:
    display_name: str  # the consultancy's or organization's name, shown with the logo
    client_name: str  # the organization the assessment belongs to
    logo_data_uri: str | None  # inlined: the renderer fetches nothing
    colour: str  # "#RRGGBB", validated again here because it is written into CSS


@dataclass(frozen=True)
class Reference:
    id: str
    title: str
    as_summarised: bool


@dataclass(frozen=True)
class RiskDecisionView:
    kind: str
    justification: str
    owner: str
    expires_on: str
    recorded_at: str


@dataclass(frozen=True)
class FindingView:
    anchor: str
    rule_id: str
    severity: str
    severity_label: str
    points: int
    section: str
    section_title: str
    title: str
    rationale: str
    remediation: str
    evidence: tuple[str, ...]
    references: tuple[Reference, ...]
    references_text: str  # one reference a line, "as summarised" marked
    decisions: tuple[RiskDecisionView, ...]

    @property
    def evidence_text(self) -> str:
        return "\n".join(self.evidence)


@dataclass(frozen=True)
class DecisionView:
    decision: str
    label: str
    reviewer: str
    decided_at: str
    conditions: str


@dataclass(frozen=True)
class LogLine:
    number: int | None
    line_label: str
    text: str


@dataclass(frozen=True)
class EngineInstanceView:
    label: str
    pool: str
    context: str


@dataclass(frozen=True)
class EvidenceFileView:
    name: str
    engine: str
    parsed: bool
    reason: str
    pool: str
    pool_line: str
    context: str
    context_line: str
    lines: tuple[LogLine, ...]
    instances: tuple[EngineInstanceView, ...]
    notes: tuple[str, ...]
    instances_text: str

    @property
    def notes_text(self) -> str:
        return "\n".join(self.notes)


@dataclass(frozen=True)
class EvidenceQuestionView:
    code: str
    question: str
    pool: str
    context: str
    files: tuple[EvidenceFileView, ...]


@dataclass(frozen=True)
class AnswerView:
    code: str
    question: str
    value: str
    answered: bool
    comment: str


@dataclass(frozen=True)
class AnswerSectionView:
    code: str
    title: str
    audience: str
    answers: tuple[AnswerView, ...]


@dataclass(frozen=True)
class SeverityCount:
    severity: str
    label: str
    count: int


@dataclass(frozen=True)
class ReportContext:
    """Everything the report template prints, already in the report's language."""

    language: str
    html_lang: str
    labels: Mapping[str, str]
    number: str
    title: str  # PDF metadata
    subject: str  # PDF metadata
    keywords: tuple[str, ...]
    generated_on: str
    generated_at: str
    generated_at_iso: str
    branding: Branding
    vendor: str
    assessment_id: int
    questionnaire: str
    questionnaire_title: str
    ruleset: str
    ruleset_title: str
    run_id: int
    scored_as_of: str
    submitted_at: str
    assessor: str
    risk_tier: str
    risk_tier_label: str
    risk_score: int
    severity_counts: tuple[SeverityCount, ...]
    findings: tuple[FindingView, ...]
    critical_and_high: tuple[FindingView, ...]
    decision: DecisionView | None
    severity_chart: BarChart
    coverage_chart: BarChart
    evidence: tuple[EvidenceQuestionView, ...]
    answer_sections: tuple[AnswerSectionView, ...]
    buyer_sections: str
    sign_off_intro: str
    verification_text: str
    verification_url: str
    answers_intro: str
    signature_roles: tuple[str, ...]


# -- building it ---------------------------------------------------------------------------


def report_context(
    *,
    run: ScoringRun,
    language: str,
    number: str,
    generated_at: dt.datetime | None = None,
) -> ReportContext:
    """The context of the report of `run` in `language` (database reads happen here only)."""
    labels = labels_for(language)
    assessment = Assessment.objects.select_related("vendor", "questionnaire", "created_by").get(
        pk=run.assessment_id
    )
    organization = Organization.objects.get(pk=assessment.organization_id)
    ruleset = run.ruleset
    rules = ruleset.spec
    questionnaire = assessment.questionnaire.spec
    findings_rows = list(Finding.objects.filter(run=run).order_by("position"))
    references = _references({ref for row in findings_rows for ref in row.references}, language)
    decisions = _risk_decisions(run, {row.rule_id for row in findings_rows}, language)
    findings = tuple(
        _finding(row, rules, questionnaire, references, decisions.get(row.rule_id, ()), language)
        for row in findings_rows
    )
    generated = timezone.localtime(generated_at or timezone.now())
    vendor = assessment.vendor.name
    tier_label = labels[f"severity_{run.risk_tier}"] if run.risk_tier else "—"
    buyer_sections = labels["list_separator"].join(
        s.code for s in questionnaire.sections if not s.vendor_facing
    )
    return ReportContext(
        language=language,
        html_lang=HTML_LANG[language],
        labels=labels,
        number=number,
        title=f"{number} · {vendor} · {labels['report_title']}",
        subject=" · ".join(
            f"{label}{labels['colon']}{value}"
            for label, value in (
                (labels["report_title"], vendor),
                (labels["client"], organization.name),
                (labels["risk_tier"], tier_label),
                (labels["ruleset"], ruleset.key),
            )
        ),
        keywords=("AVIA", number, ruleset.key, *(f.rule_id for f in findings)),
        generated_on=format_date(generated.date(), language),
        generated_at=format_datetime(generated, language),
        generated_at_iso=generated.isoformat(timespec="seconds"),
        branding=_branding(organization),
        vendor=vendor,
        assessment_id=assessment.pk,
        questionnaire=questionnaire.key,
        questionnaire_title=questionnaire.title.get(language),
        ruleset=ruleset.key,
        ruleset_title=rules.title.get(language),
        run_id=run.pk,
        scored_as_of=format_date(run.as_of, language),
        submitted_at=format_date(
            timezone.localtime(assessment.submitted_at) if assessment.submitted_at else None,
            language,
        ),
        assessor=_person(assessment.created_by),
        risk_tier=run.risk_tier,
        risk_tier_label=tier_label,
        risk_score=run.risk_score or 0,
        severity_counts=_severity_counts(findings, labels),
        findings=findings,
        critical_and_high=tuple(f for f in findings if f.severity in ("critical", "high")),
        decision=_decision(run, language),
        severity_chart=_severity_chart(findings, labels),
        coverage_chart=_coverage_chart(run.sections, questionnaire, language, organization),
        evidence=_evidence(run.evidence_snapshot, questionnaire, language),
        answer_sections=_answer_sections(run, questionnaire, language),
        buyer_sections=buyer_sections,
        sign_off_intro=labels["sign_off_intro"].format(run=f"#{run.pk}"),
        verification_text=labels["verification"].format(organization=organization.name),
        verification_url=verification_url(),
        answers_intro=labels["answers_intro"].format(buyer=buyer_sections),
        signature_roles=(labels["reviewer"], labels["role_procurement"], labels["role_compliance"]),
    )


def _person(user: User | None) -> str:
    if user is None:
        return "—"
    full_name = user.get_full_name()
    return f"{full_name} <{user.email}>" if full_name else user.email


def brand_colour(value: str) -> str:
    return value.upper() if value and _BRAND_COLOUR.match(value) else DEFAULT_BRAND_COLOUR


def _branding(organization: Organization) -> Branding:
    logo = None
    if organization.has_logo and organization.logo:
        encoded = base64.b64encode(bytes(organization.logo)).decode("ascii")
        logo = f"data:{organization.logo_content_type};base64,{encoded}"
    return Branding(
        display_name=organization.display_name,
        client_name=organization.name,
        logo_data_uri=logo,
        colour=brand_colour(organization.brand_colour),
    )


def _references(ref_ids: set[str], language: str) -> dict[str, Reference]:
    return {
        row.ref_id: Reference(
            id=row.ref_id,
            title=(ref := row.as_ref()).title.get(language),
            as_summarised=ref.as_summarised,
        )
        for row in Framework.objects.filter(ref_id__in=ref_ids)
    }


def _risk_decisions(
    run: ScoringRun, rule_ids: set[str], language: str
) -> dict[str, tuple[RiskDecisionView, ...]]:
    """Risk acceptances and mitigations of the run's findings, as they stood for this run.

    A decision is recorded against the assessment's latest run; those made after a later run
    superseded this one belong to that later run, so they are left out of this run's report.
    """
    labels = labels_for(language)
    decisions = RiskDecision.objects.filter(assessment_id=run.assessment_id, rule_id__in=rule_ids)
    later_run = (
        ScoringRun.objects.filter(assessment_id=run.assessment_id, created_at__gt=run.created_at)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    if later_run is not None:
        decisions = decisions.filter(created_at__lt=later_run)
    found: dict[str, list[RiskDecisionView]] = {}
    for decision in decisions.order_by("created_at", "id"):
        found.setdefault(decision.rule_id, []).append(
            RiskDecisionView(
                kind=labels[f"risk_decision_{decision.kind}"],
                justification=decision.justification,
                owner=decision.owner,
                expires_on=format_date(decision.expires_on, language),
                recorded_at=format_date(timezone.localtime(decision.created_at), language),
            )
        )
    return {rule_id: tuple(views) for rule_id, views in found.items()}


def _finding(
    row: Finding,
    rules: RulesetSpec,
    questionnaire: QuestionnaireSpec,
    references: Mapping[str, Reference],
    decisions: tuple[RiskDecisionView, ...],
    language: str,
) -> FindingView:
    labels = labels_for(language)
    rule = rules.rules_by_id.get(row.rule_id)
    cited = tuple(
        references.get(ref_id) or Reference(id=ref_id, title="", as_summarised=False)
        for ref_id in row.references
    )
    try:
        section_title = questionnaire.section(row.section).title.get(language)
    except KeyError:
        section_title = ""
    return FindingView(
        anchor=f"finding-{row.rule_id}",
        rule_id=row.rule_id,
        severity=row.severity,
        severity_label=labels[f"severity_{row.severity}"],
        points=row.points,
        section=row.section,
        section_title=section_title,
        title=rule.title.get(language) if rule else row.rule_id,
        rationale=rule.rationale.get(language) if rule else "",
        remediation=rule.remediation.get(language) if rule else "",
        evidence=tuple(EvidenceItem.from_dict(item).as_text() for item in row.evidence),
        references=cited,
        references_text="\n".join(
            f"{ref.id} — {ref.title}"
            + (
                labels["parenthesised"].format(text=labels["as_summarised"])
                if ref.as_summarised
                else ""
            )
            for ref in cited
        ),
        decisions=decisions,
    )


def _decision(run: ScoringRun, language: str) -> DecisionView | None:
    labels = labels_for(language)
    review = (
        Review.objects.filter(run=run).select_related("reviewer").order_by("-created_at").first()
    )
    if review is None:
        return None
    return DecisionView(
        decision=review.decision,
        label=labels[f"decision_{review.decision}"],
        reviewer=_person(review.reviewer),
        decided_at=format_date(timezone.localtime(review.created_at), language),
        conditions=review.conditions,
    )


def _severity_counts(
    findings: Sequence[FindingView], labels: Mapping[str, str]
) -> tuple[SeverityCount, ...]:
    return tuple(
        SeverityCount(
            severity=severity,
            label=labels[f"severity_{severity}"],
            count=sum(1 for f in findings if f.severity == severity),
        )
        for severity in SEVERITIES
    )


def _severity_chart(findings: Sequence[FindingView], labels: Mapping[str, str]) -> BarChart:
    counts = _severity_counts(findings, labels)
    return bar_chart(
        [
            ChartRow(
                label=count.label,
                value=count.count,
                value_label=str(count.count),
                colour=SEVERITY_COLOURS[count.severity],
            )
            for count in counts
        ],
        maximum=max([count.count for count in counts] + [1]),
    )


def _coverage_chart(
    sections: Mapping[str, Any],
    questionnaire: QuestionnaireSpec,
    language: str,
    organization: Organization,
) -> BarChart:
    colour = brand_colour(organization.brand_colour)
    rows = []
    for section in questionnaire.sections:
        coverage = (sections or {}).get(section.code)
        if not coverage:
            continue
        share = float(coverage.get("coverage", 1.0))
        rows.append(
            ChartRow(
                label=f"{section.code} {section.title.get(language)}",
                value=share,
                value_label=f"{round(share * 100)}%",
                colour=colour,
            )
        )
    return bar_chart(rows, maximum=1.0)


# -- evidence ------------------------------------------------------------------------------


def _evidence(
    snapshot: Mapping[str, Any], questionnaire: QuestionnaireSpec, language: str
) -> tuple[EvidenceQuestionView, ...]:
    views = []
    for code, entry in sorted((snapshot or {}).items()):
        question = questionnaire.questions.get(code)
        views.append(
            EvidenceQuestionView(
                code=code,
                question=question.text.get(language) if question else "",
                pool=format_tokens(entry.get("pool"), language),
                context=format_tokens(entry.get("context"), language),
                files=tuple(_evidence_file(f, language) for f in entry.get("files") or ()),
            )
        )
    return tuple(views)


def _evidence_file(result: Mapping[str, Any], language: str) -> EvidenceFileView:
    labels = labels_for(language)
    lines: dict[int | None, str] = {}

    def keep(number: Any, text: Any) -> None:
        if text:
            lines.setdefault(number if isinstance(number, int) else None, str(text))

    keep(result.get("pool_line"), result.get("pool_text"))
    keep(result.get("context_line"), result.get("context_text"))
    instances = []
    for instance in result.get("instances") or ():
        keep(instance.get("pool_line"), instance.get("pool_text"))
        keep(instance.get("context_line"), instance.get("context_text"))
        role = instance.get("role")
        engine = ENGINE_LABELS.get(instance.get("engine") or "", instance.get("engine") or "")
        label = f"{engine} · {labels.get(f'role_{role}', role)}" if role else engine
        if instance.get("failed_start"):
            label = label + labels["parenthesised"].format(text=labels["failed_start"])
        instances.append(
            EngineInstanceView(
                label=label,
                pool=_tokens_at(instance.get("pool_tokens"), instance.get("pool_line"), language),
                context=_tokens_at(
                    instance.get("context_tokens"), instance.get("context_line"), language
                ),
            )
        )
    engine = result.get("engine") or ""
    return EvidenceFileView(
        name=str(result.get("source_name") or ""),
        engine=ENGINE_LABELS.get(engine, engine) if engine else labels["not_parsed"],
        parsed=bool(result.get("parsed")),
        reason=str(result.get("reason") or ""),
        pool=format_tokens(result.get("pool"), language),
        pool_line=format_line(result.get("pool_line"), language),
        context=format_tokens(result.get("context"), language),
        context_line=format_line(result.get("context_line"), language),
        lines=tuple(
            LogLine(number=number, line_label=format_line(number, language), text=text)
            for number, text in sorted(lines.items(), key=lambda item: item[0] or 0)
        ),
        # One instance says nothing the file's own figures do not; several are worth a list.
        instances=tuple(instances) if len(instances) > 1 else (),
        notes=tuple(str(note) for note in result.get("notes") or ()),
        instances_text="\n".join(
            f"{i.label}{labels['colon']}{labels['kv_pool']} {i.pool}; "
            f"{labels['context_length']} {i.context}"
            for i in instances
        )
        if len(instances) > 1
        else "",
    )


def _tokens_at(tokens: Any, line: Any, language: str) -> str:
    if tokens is None:
        return "—"
    where = format_line(line if isinstance(line, int) else None, language)
    return (
        format_tokens(tokens, language) + labels_for(language)["parenthesised"].format(text=where)
        if where
        else format_tokens(tokens, language)
    )


# -- answers -------------------------------------------------------------------------------


def _answer_sections(
    run: ScoringRun, questionnaire: QuestionnaireSpec, language: str
) -> tuple[AnswerSectionView, ...]:
    labels = labels_for(language)
    values = run.answers_snapshot or {}
    comments = _comments_as_of(run)
    evidence_names = {
        code: [str(f.get("source_name") or "") for f in (entry.get("files") or ())]
        for code, entry in (run.evidence_snapshot or {}).items()
    }
    sections = []
    for section in questionnaire.sections:
        answers = []
        for question in section.questions:
            value = _answer_text(question, values.get(question.code), language)
            if question.type == "file" and evidence_names.get(question.code):
                value = labels["list_separator"].join(evidence_names[question.code])
            answers.append(
                AnswerView(
                    code=question.code,
                    question=question.text.get(language),
                    value=value or labels["not_answered"],
                    answered=bool(value),
                    comment=comments.get(question.code, ""),
                )
            )
        sections.append(
            AnswerSectionView(
                code=section.code,
                title=section.title.get(language),
                audience=labels[
                    "answered_by_vendor" if section.vendor_facing else "answered_by_buyer"
                ],
                answers=tuple(answers),
            )
        )
    return tuple(sections)


def _comments_as_of(run: ScoringRun) -> dict[str, str]:
    """Each question's comment as it stood when the run read the answers.

    The run's snapshot holds values only; the comments come from the append-only answer
    history, up to the moment the run finished (answers cannot change while it is scored).
    """
    cutoff = run.finished_at or run.created_at
    revisions: Iterable[tuple[str, str]] = (
        AnswerRevision.objects.filter(assessment_id=run.assessment_id, changed_at__lte=cutoff)
        .order_by("changed_at", "id")
        .values_list("question_code", "comment")
    )
    comments: dict[str, str] = {}
    for code, comment in revisions:
        comments[code] = comment
    return {code: comment for code, comment in comments.items() if comment}


def _answer_text(question: Question, value: Any, language: str) -> str:
    labels = labels_for(language)
    if value is None or value == "" or value == []:
        return ""
    if question.type == "yes_no":
        return labels.get(str(value), str(value))
    options = {option.code: option.label.get(language) for option in question.options}
    if question.type == "choice":
        return options.get(str(value), str(value))
    if question.type == "multi_choice" and isinstance(value, list):
        return labels["list_separator"].join(options.get(str(v), str(v)) for v in value)
    if question.type == "integer" and isinstance(value, int) and not isinstance(value, bool):
        unit = question.unit_label.get(language) if question.unit_label else ""
        return f"{value:,} {unit}".strip()
    if question.type == "date":
        try:
            return format_date(dt.date.fromisoformat(str(value)), language)
        except ValueError:
            return str(value)
    return str(value)


def verification_url() -> str:
    """Where the verification page lives, printed on the sign-off page."""
    try:
        path = reverse("reports:verify")
    except NoReverseMatch:  # the web pages are not mounted (e.g. a worker-only URLconf)
        path = "/reports/verify/"
    return f"{settings.SITE_URL.rstrip('/')}{path}"
