"""What a report prints, read from one scoring run and resolved into plain strings.

`report_context()` is the only part of rendering that reads the database. It works from the
run's stored snapshot (its findings, `answers_snapshot`, `evidence_snapshot` and ruleset
version) so that a report of an old run shows that run exactly as it was scored, whatever
happened to the assessment since. Everything is resolved into one language here; the
template then only lays out strings, and `reports.rendering` turns a `ReportContext` into
PDF bytes without touching the database.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

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
    ThreadStatus,
)
from assessments.presenters.answers import AnswerSection, FileRef, answer_sections
from assessments.presenters.charts import BarChart, coverage_chart, severity_chart
from assessments.presenters.evidence import EvidenceQuestionView, evidence_views
from assessments.presenters.findings import FindingView, finding_views
from assessments.presenters.formats import review_decision_label, severity_label
from assessments.presenters.probe import ProbeView, probe_view_of_run
from assessments.selectors import threads_for
from core.formats import format_date, format_datetime, list_text
from scoring.selectors import frameworks_for
from scoring.spec import SEVERITIES

from .labels import HTML_LANG, labels_for

DEFAULT_BRAND_COLOUR = "#0B5CAD"
_BRAND_COLOUR = re.compile(r"^#[0-9A-Fa-f]{6}$")


# -- the data the template prints ----------------------------------------------------------


@dataclass(frozen=True)
class Branding:
    display_name: str  # the organization's name as its reports show it, with its logo
    client_name: str  # the organization the assessment belongs to
    logo_data_uri: str | None  # inlined: the renderer fetches nothing
    colour: str  # "#RRGGBB", validated again here because it is written into CSS
    # The consultancy whose client the organization is, which prepared the report (its name
    # and logo beside the client's; "Prepared by" names the organization itself without one).
    consultancy_name: str | None = None
    consultancy_logo_data_uri: str | None = None

    @property
    def prepared_by(self) -> str:
        return self.consultancy_name or self.display_name


@dataclass(frozen=True)
class DecisionView:
    decision: str
    label: str
    reviewer: str
    decided_at: str
    conditions: str


@dataclass(frozen=True)
class ThreadMessageView:
    author: str
    at: str
    body: str


@dataclass(frozen=True)
class ThreadView:
    code: str
    question: str
    status: str
    messages: tuple[ThreadMessageView, ...]


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
    # The cover's title: the shipped isolation assessment's, or an organization's own
    # questionnaire's title; and what a finding's rationale is called (an incident fact for the
    # shipped rulesets, a rationale for an organization's own).
    report_title: str
    rationale_label: str
    title: str  # PDF metadata
    subject: str  # PDF metadata
    keywords: tuple[str, ...]
    generated_on: str
    generated_at: str
    generated_at_iso: str
    branding: Branding
    vendor: str
    assessment_id: int
    assessment_reference: str  # "#12 · GLM-5.3 launch": which of the vendor's assessments
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
    probe: ProbeView | None  # the isolation probe result the run read (PRB-02), if any
    answer_sections: tuple[AnswerSection, ...]
    # The clarification threads, when the report was asked with them (None: not asked).
    threads: tuple[ThreadView, ...] | None
    buyer_sections: str
    sign_off_intro: str
    verification_text: str
    verification_url: str
    answers_intro: str
    signature_roles: tuple[str, ...]
    # The questionnaire is an organization's, written in English only: the edition says so.
    english_only: bool = False


# -- building it ---------------------------------------------------------------------------


def report_context(
    *,
    run: ScoringRun,
    language: str,
    number: str,
    generated_at: dt.datetime | None = None,
    include_threads: bool = False,
) -> ReportContext:
    """The context of the report of `run` in `language` (database reads happen here only).

    Every time is printed in the organization's time zone, like on its pages and in its emails.
    """
    labels = labels_for(language)
    assessment = Assessment.objects.select_related("vendor", "questionnaire", "created_by").get(
        pk=run.assessment_id
    )
    organization = Organization.objects.get(pk=assessment.organization_id)
    with timezone.override(organization.time_zone):
        context = _report_context(
            run, assessment, organization, labels, language, number, generated_at
        )
        if include_threads:
            context = replace(context, threads=_threads(assessment, labels, language))
        return context


def _report_context(
    run: ScoringRun,
    assessment: Assessment,
    organization: Organization,
    labels: Mapping[str, str],
    language: str,
    number: str,
    generated_at: dt.datetime | None,
) -> ReportContext:
    ruleset = run.ruleset
    rules = ruleset.spec
    questionnaire = assessment.questionnaire.spec
    generated = timezone.localtime(generated_at or timezone.now())
    findings_rows = list(Finding.objects.filter(run=run).order_by("position"))
    findings = tuple(
        finding_views(
            findings_rows,
            spec=questionnaire,
            ruleset=rules,
            answers=run.answers_snapshot or {},
            frameworks=frameworks_for(ruleset=ruleset),
            language=language,
            decisions=_risk_decisions(run, {row.rule_id for row in findings_rows}),
            # An acceptance whose expiry date has passed when the report is made says so.
            today=generated.date(),
        )
    )
    vendor = assessment.vendor.name
    tier_label = severity_label(run.risk_tier, language) if run.risk_tier else "—"
    buyer_sections = list_text(
        [s.code for s in questionnaire.sections if not s.vendor_facing], language
    )
    counts = {
        severity: sum(1 for f in findings if f.severity == severity) for severity in SEVERITIES
    }
    shipped = assessment.questionnaire.organization_id is None
    report_title = labels["report_title"] if shipped else questionnaire.title.get(language)
    return ReportContext(
        language=language,
        html_lang=HTML_LANG[language],
        labels=labels,
        number=number,
        report_title=report_title,
        rationale_label=labels["incident_fact"] if shipped else labels["rationale"],
        title=f"{number} · {vendor} {assessment.reference} · {report_title}",
        subject=" · ".join(
            f"{label}{labels['colon']}{value}"
            for label, value in (
                (report_title, vendor),
                (labels["client"], organization.name),
                (labels["risk_tier"], tier_label),
                (labels["ruleset"], ruleset.key),
            )
        ),
        keywords=("AVIA", number, ruleset.key, *(f.rule_id for f in findings)),
        generated_on=format_date(generated, language),
        generated_at=format_datetime(generated, language),
        generated_at_iso=generated.isoformat(timespec="seconds"),
        branding=_branding(organization),
        vendor=vendor,
        assessment_id=assessment.pk,
        assessment_reference=assessment.reference,
        questionnaire=questionnaire.key,
        questionnaire_title=questionnaire.title.get(language),
        english_only=assessment.questionnaire.english_only,
        ruleset=ruleset.key,
        ruleset_title=rules.title.get(language),
        run_id=run.pk,
        scored_as_of=format_date(run.as_of, language),
        # The submission this run scored (its as-of date, on the organization's clock), not
        # the assessment's latest one: a report of an older run must not borrow a later date.
        submitted_at=format_date(run.as_of, language),
        assessor=_person(assessment.created_by),
        risk_tier=run.risk_tier,
        risk_tier_label=tier_label,
        risk_score=run.risk_score or 0,
        severity_counts=tuple(
            SeverityCount(
                severity=severity, label=severity_label(severity, language), count=counts[severity]
            )
            for severity in SEVERITIES
        ),
        findings=findings,
        critical_and_high=tuple(f for f in findings if f.severity in ("critical", "high")),
        decision=_decision(run, language),
        severity_chart=severity_chart(counts, language),
        coverage_chart=coverage_chart(
            questionnaire,
            [run.sections or {}],
            language,
            colour=brand_colour(organization.brand_colour),
            long_labels=True,
        ),
        evidence=evidence_views(run.evidence_snapshot, questionnaire, language),
        probe=probe_view_of_run(run.evidence_snapshot, language),
        answer_sections=tuple(
            answer_sections(
                questionnaire,
                run.answers_snapshot or {},
                language,
                comments=_comments_as_of(run),
                files=_evidence_files(run),
            )
        ),
        threads=None,
        buyer_sections=buyer_sections,
        sign_off_intro=labels["sign_off_intro"].format(run=f"#{run.pk}"),
        verification_text=labels["verification"].format(organization=organization.name),
        verification_url=verification_url(),
        answers_intro=labels["answers_intro"].format(buyer=buyer_sections),
        signature_roles=(labels["reviewer"], labels["role_procurement"], labels["role_compliance"]),
    )


def _threads(
    assessment: Assessment, labels: Mapping[str, str], language: str
) -> tuple[ThreadView, ...]:
    """Every clarification thread of the assessment, as it stands when the report is made."""
    questions = assessment.questionnaire.spec.questions
    views = []
    for thread in threads_for(assessment=assessment):
        question = questions.get(thread.question_code)
        views.append(
            ThreadView(
                code=thread.question_code,
                question=question.text.get(language) if question else "",
                status=labels[
                    "thread_resolved" if thread.status == ThreadStatus.RESOLVED else "thread_open"
                ],
                messages=tuple(
                    ThreadMessageView(
                        author=(
                            labels["thread_vendor"].format(
                                email=message.vendor_link.contact_email
                                if message.vendor_link
                                else "—"
                            )
                            if message.from_vendor
                            else _person(message.author)
                        ),
                        at=format_datetime(timezone.localtime(message.created_at), language),
                        body=message.body,
                    )
                    for message in thread.messages.all()
                ),
            )
        )
    return tuple(views)


def _person(user: User | None) -> str:
    if user is None:
        return "—"
    full_name = user.get_full_name()
    return f"{full_name} <{user.email}>" if full_name else user.email


def brand_colour(value: str) -> str:
    return value.upper() if value and _BRAND_COLOUR.match(value) else DEFAULT_BRAND_COLOUR


def _branding(organization: Organization) -> Branding:
    consultancy = organization.prepared_by()
    return Branding(
        display_name=organization.display_name,
        client_name=organization.name,
        logo_data_uri=organization.logo_data_uri,
        colour=brand_colour(organization.brand_colour),
        consultancy_name=consultancy.display_name if consultancy else None,
        consultancy_logo_data_uri=consultancy.logo_data_uri if consultancy else None,
    )


def _risk_decisions(run: ScoringRun, rule_ids: set[str]) -> dict[str, list[RiskDecision]]:
    """Risk acceptances and mitigations of the run's findings, as they stood for this run.

    A decision is recorded against the assessment's latest run; those made after a later run
    superseded this one belong to that later run, so they are left out of this run's report.
    """
    decisions = RiskDecision.objects.filter(
        assessment_id=run.assessment_id, rule_id__in=rule_ids
    ).select_related("created_by")
    later_run = (
        ScoringRun.objects.filter(assessment_id=run.assessment_id, created_at__gt=run.created_at)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    if later_run is not None:
        decisions = decisions.filter(created_at__lt=later_run)
    found: dict[str, list[RiskDecision]] = defaultdict(list)
    for decision in decisions.order_by("created_at", "id"):
        found[decision.rule_id].append(decision)
    return found


def _decision(run: ScoringRun, language: str) -> DecisionView | None:
    review = (
        Review.objects.filter(run=run).select_related("reviewer").order_by("-created_at").first()
    )
    if review is None:
        return None
    return DecisionView(
        decision=review.decision,
        label=review_decision_label(review.decision, language),
        reviewer=_person(review.reviewer),
        decided_at=format_date(review.created_at, language),
        conditions=review.conditions,
    )


def _evidence_files(run: ScoringRun) -> dict[str, list[FileRef]]:
    """The files the run read, by question (names only: a report links nowhere)."""
    return {
        code: [FileRef(name=str(f.get("source_name") or "")) for f in entry.get("files") or ()]
        for code, entry in (run.evidence_snapshot or {}).items()
    }


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


def verification_url() -> str:
    """Where the verification page lives, printed on the sign-off page."""
    try:
        path = reverse("reports:verify")
    except NoReverseMatch:  # the web pages are not mounted (e.g. a worker-only URLconf)
        path = "/reports/verify/"
    return f"{settings.SITE_URL.rstrip('/')}{path}"
