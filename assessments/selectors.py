"""Reads of tenant data. Every function takes the organization: this is where tenancy lives.

An object of another organization is simply not found (`Http404` via `get_object_or_404`), so
"missing" and "forbidden" look the same and ids cannot be probed.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F, Max, OuterRef, Q, QuerySet, Subquery
from django.shortcuts import get_object_or_404
from django.utils import translation

from accounts.models import Organization
from core.pagination import cached_count, cached_value
from scoring.models import Rule

from .models import (
    CLOSED_STATUSES,
    OPEN_STATUSES,
    RENEWABLE_STATUSES,
    Assessment,
    AssessmentStatus,
    AuditEvent,
    EvidenceFile,
    Finding,
    Review,
    RiskDecision,
    RiskDecisionKind,
    RiskTier,
    ScoringRun,
    Thread,
    ThreadStatus,
    ThreadTurn,
    Vendor,
    VendorLink,
    overdue,
)


def vendors_for(*, organization: Organization) -> QuerySet[Vendor]:
    return Vendor.objects.filter(organization=organization)


def vendors_changed_at(*, organization: Organization) -> dt.datetime | None:
    """When the organization last added or changed a vendor (vendors are never deleted): what a
    cached count of its vendors is keyed on, a search by name included (a rename moves it).
    One index lookup."""
    return vendors_for(organization=organization).aggregate(newest=Max("updated_at"))["newest"]


def vendor_assessment_counts(
    *, organization: Organization, vendors: list[Vendor]
) -> dict[int, dict[str, int]]:
    """For a page of vendors: how many assessments each has, and how many are open (one
    grouped read of their assessments, not of the portfolio's)."""
    rows = (
        Assessment.objects.filter(organization=organization, vendor__in=vendors)
        .order_by()
        .values("vendor")
        .annotate(total=Count("pk"), open=Count("pk", filter=Q(status__in=OPEN_STATUSES)))
    )
    counts = {row["vendor"]: {"total": row["total"], "open": row["open"]} for row in rows}
    return {vendor.pk: counts.get(vendor.pk, {"total": 0, "open": 0}) for vendor in vendors}


def vendor_get(*, organization: Organization, vendor_id: object) -> Vendor:
    return get_object_or_404(vendors_for(organization=organization), pk=vendor_id)


def assessments_for(*, organization: Organization) -> QuerySet[Assessment]:
    latest_decision = (
        Review.objects.filter(assessment=OuterRef("pk"))
        .order_by("-created_at", "-pk")
        .values("decision")[:1]
    )
    # Large JSON documents stay in the database: the catalogue's contents (`spec` is parsed
    # once per process and version), so a page of 50 rows no longer decodes them 100 times.
    return (
        Assessment.objects.filter(organization=organization)
        .select_related("vendor", "questionnaire", "latest_run__ruleset")
        .annotate(latest_decision=Subquery(latest_decision))
        .defer(
            "questionnaire__content",
            "latest_run__ruleset__content",
            # What the latest run scored: read by the pages of one run, never by a list.
            "latest_run__answers_snapshot",
            "latest_run__evidence_snapshot",
        )
    )


def list_rows(assessments: QuerySet[Assessment]) -> QuerySet[Assessment]:
    """What a list of assessments shows, without the big JSON columns."""
    return assessments.defer(
        "questionnaire__content",
        "latest_run__answers_snapshot",
        "latest_run__evidence_snapshot",
        "latest_run__sections",
        "latest_run__ruleset__content",
    )


def assessments_changed_at(*, organization: Organization) -> dt.datetime | None:
    """When any assessment of the organization last changed (created, status, tier, due date
    all touch `updated_at`): what cached counts of its assessments are keyed on. One index
    lookup."""
    newest = Assessment.objects.filter(organization=organization).aggregate(Max("updated_at"))
    return newest["updated_at__max"]


class UrgencyOrdered:
    """Assessments in the dashboard's order — overdue first, then those in progress, then
    those signed off; within each, by due date (none last), newest first — that a paginator
    can count and slice without sorting the portfolio.

    Each stage of urgency is its own query, read in index order (organization, due date,
    newest; the status is in the index too): a page is the ids of the next rows of one stage
    or two, read from the index alone, then those rows, so page 1,000 costs about what page 1
    does. Each stage's size is a cached count (`version`: when the organization's
    assessments last changed), the date included, since "overdue" moves at midnight."""

    def __init__(self, assessments: QuerySet[Assessment], *, today: dt.date, version: object):
        self.assessments = assessments
        late = overdue(today)
        order = (F("due_date").asc(nulls_last=True), "-created_at", "-pk")
        self.stages = [
            assessments.filter(late).order_by(*order),
            assessments.exclude(late).exclude(status__in=CLOSED_STATUSES).order_by(*order),
            assessments.exclude(late).filter(status__in=CLOSED_STATUSES).order_by(*order),
        ]
        self.sizes = [cached_count(stage, version=(version, today)) for stage in self.stages]

    def count(self) -> int:
        return sum(self.sizes)

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, window: slice) -> list[Assessment]:
        start, stop, _step = window.indices(self.count())
        ids: list[int] = []
        for stage, size in zip(self.stages, self.sizes, strict=True):
            if start < size and stop > 0:
                # Ids first, from the index alone (however deep the page), then their rows.
                ids += stage.values_list("pk", flat=True)[max(start, 0) : min(stop, size)]
            start, stop = start - size, stop - size
        if not ids:
            return []
        found = {row.pk: row for row in self.assessments.filter(pk__in=ids)}
        return [found[pk] for pk in ids]


# "Not read yet", where None is a value (an organization without assessments).
_UNREAD: Any = object()


def portfolio_counts(
    *, organization: Organization, today: dt.date, changed_at: object = _UNREAD
) -> dict[str, Any]:
    """How many assessments the organization has by status and by tier, and how many are
    overdue: three grouped reads of every row, so cached until its assessments change
    (`changed_at`: `assessments_changed_at`, when the caller has read it already)."""

    def compute() -> dict[str, Any]:
        everything = Assessment.objects.filter(organization=organization).order_by()
        by_status = dict(everything.values_list("status").annotate(n=Count("pk")))
        by_tier = dict(
            everything.exclude(risk_tier="").values_list("risk_tier").annotate(n=Count("pk"))
        )
        late = everything.filter(overdue(today)).count()
        return {"by_status": by_status, "by_tier": by_tier, "overdue": late}

    if changed_at is _UNREAD:
        changed_at = assessments_changed_at(organization=organization)
    version = (changed_at, today)
    return cached_value(f"portfolio counts {organization.pk}", version=version, compute=compute)


def assessment_get(*, organization: Organization, assessment_id: object) -> Assessment:
    return get_object_or_404(assessments_for(organization=organization), pk=assessment_id)


def runs_for(*, assessment: Assessment) -> QuerySet[ScoringRun]:
    return ScoringRun.objects.filter(assessment=assessment).select_related("ruleset")


def run_get(*, organization: Organization, run_id: object) -> ScoringRun:
    return get_object_or_404(
        ScoringRun.objects.filter(assessment__organization=organization).select_related(
            "ruleset", "assessment"
        ),
        pk=run_id,
    )


def findings_for(*, run: ScoringRun) -> QuerySet[Finding]:
    return Finding.objects.filter(run=run)


def critical_findings_for(*, run: ScoringRun) -> dict[str, str]:
    """The run's critical findings: rule id → the rule's title in the active language, in the
    findings' order."""
    rule_ids = list(
        findings_for(run=run).filter(severity=RiskTier.CRITICAL).values_list("rule_id", flat=True)
    )
    titles = {
        rule_id: zh_hant if (translation.get_language() or "").startswith("zh") else en
        for rule_id, en, zh_hant in Rule.objects.filter(
            ruleset_id=run.ruleset_id, rule_id__in=rule_ids
        ).values_list("rule_id", "title_en", "title_zh_hant")
    }
    return {rule_id: titles.get(rule_id, rule_id) for rule_id in rule_ids}


def evidence_for(*, assessment: Assessment) -> QuerySet[EvidenceFile]:
    return EvidenceFile.objects.filter(assessment=assessment)


def evidence_get(*, organization: Organization, evidence_id: object) -> EvidenceFile:
    return get_object_or_404(
        EvidenceFile.objects.filter(assessment__organization=organization), pk=evidence_id
    )


def vendor_links_for(*, assessment: Assessment) -> QuerySet[VendorLink]:
    return VendorLink.objects.filter(assessment=assessment)


def vendor_link_get(*, organization: Organization, link_id: object) -> VendorLink:
    return get_object_or_404(
        VendorLink.objects.filter(assessment__organization=organization), pk=link_id
    )


def audit_events_for(
    *, organization: Organization, assessment: Assessment | None = None
) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.filter(organization=organization)
    if assessment is not None:
        events = events.filter(assessment=assessment)
    return events.select_related("assessment")


def threads_for(*, assessment: Assessment) -> QuerySet[Thread]:
    """The assessment's clarification threads (its organization's: the caller fetched it
    through `assessment_get` or a vendor link), with their messages and authors."""
    return Thread.objects.filter(assessment=assessment).prefetch_related(
        "messages__author", "messages__vendor_link"
    )


def thread_find(*, assessment: Assessment, question_code: str) -> Thread | None:
    return threads_for(assessment=assessment).filter(question_code=question_code).first()


def threads_awaiting_members(
    *, organization: Organization, assessment_ids: list[int]
) -> dict[int, int]:
    """Per assessment of the organization among `assessment_ids` (a page's): how many open
    threads wait for a member's answer (the vendor wrote last)."""
    rows = (
        Thread.objects.filter(
            assessment__organization=organization,
            assessment_id__in=assessment_ids,
            status=ThreadStatus.OPEN,
            turn=ThreadTurn.MEMBER,
        )
        .values("assessment_id")
        .annotate(count=Count("pk"))
    )
    return {row["assessment_id"]: row["count"] for row in rows}


# -- the portfolio's standing: what a portfolio report and the weekly digest read ------------

# Statuses in which the vendor owes answers (a link was sent).
AWAITING_VENDOR = (AssessmentStatus.SENT, AssessmentStatus.CHANGES_REQUESTED)


@dataclass(frozen=True)
class Deadlines:
    """What is late or falls due within a horizon, on the organization's `today`."""

    overdue: list[Assessment]  # by the date each has been late since (`overdue()`)
    due_soon: list[Assessment]  # answers due within the horizon
    reassessments_due: list[Assessment]  # next assessments due within the horizon
    acceptances_expiring: list[RiskDecision]  # risk acceptances ending within the horizon


def deadlines_for(*, organization: Organization, today: dt.date, horizon: dt.date) -> Deadlines:
    """The one reading of "overdue" and "due soon" for the digest and the portfolio report."""
    assessments = Assessment.objects.filter(organization=organization).select_related("vendor")
    late = assessments.filter(overdue(today))
    return Deadlines(
        # Answers and next assessments alike, by the date they have been late since.
        overdue=sorted(late, key=lambda a: (a.overdue_since or today, a.pk)),
        due_soon=list(
            assessments.filter(
                status__in=AWAITING_VENDOR, due_date__gte=today, due_date__lte=horizon
            ).order_by("due_date", "pk")
        ),
        reassessments_due=list(
            assessments.filter(
                status__in=RENEWABLE_STATUSES,
                reassess_by__gte=today,
                reassess_by__lte=horizon,
                renewals__isnull=True,
            ).order_by("reassess_by", "pk")
        ),
        acceptances_expiring=list(
            RiskDecision.objects.filter(
                assessment__organization=organization,
                kind=RiskDecisionKind.ACCEPTANCE,
                expires_on__gte=today,
                expires_on__lte=horizon,
            )
            .select_related("assessment__vendor")
            .order_by("expires_on", "pk")
        ),
    )


@dataclass(frozen=True)
class VendorStanding:
    """A vendor and its current result: its newest assessment that has been scored."""

    vendor: Vendor
    assessment: Assessment | None  # None: never scored

    @property
    def tier(self) -> str:
        return self.assessment.risk_tier if self.assessment is not None else ""


@dataclass(frozen=True)
class OpenFinding:
    """A finding of a vendor's current result (a later scoring that no longer fires the rule
    closes it; a risk decision is shown beside it and never closes it)."""

    vendor_id: int
    vendor: str
    assessment_id: int
    rule_id: str
    severity: str


@dataclass(frozen=True)
class PortfolioStanding:
    today: dt.date
    vendors: list[VendorStanding]  # by name
    open_findings: list[OpenFinding]  # by vendor, then severity order of the run
    sign_offs: list[Review]  # the latest decision on each current result, newest first
    risk_decisions: list[RiskDecision]  # on the current results, soonest expiry first
    deadlines: Deadlines

    def tier_counts(self) -> dict[str, int]:
        """Vendors per tier of their current result ("" : not scored yet), every tier named."""
        counts = Counter(standing.tier for standing in self.vendors)
        return {tier: counts.get(tier, 0) for tier in (*RiskTier.values, "")}

    def severity_counts(self) -> dict[str, int]:
        counts = Counter(finding.severity for finding in self.open_findings)
        return {severity: counts.get(severity, 0) for severity in RiskTier.values}


def portfolio_standing(
    *, organization: Organization, today: dt.date, horizon_days: int
) -> PortfolioStanding:
    """Where the organization's vendors stand on `today`: each one's current result, the open
    findings, the decisions on those results, and the deadlines (`deadlines_for`)."""
    vendors = list(vendors_for(organization=organization).order_by("name", "pk"))
    current: dict[int, Assessment] = {}
    scored = list_rows(assessments_for(organization=organization)).filter(latest_run__isnull=False)
    for assessment in scored.order_by("vendor_id", "-created_at", "-pk"):
        current.setdefault(assessment.vendor_id, assessment)
    names = {vendor.pk: vendor.name for vendor in vendors}
    runs = {assessment.latest_run_id: assessment for assessment in current.values()}
    findings = (
        Finding.objects.filter(run_id__in=list(runs))
        .order_by("run_id", "position")
        .values_list("run_id", "rule_id", "severity")
    )
    open_findings = sorted(
        (
            OpenFinding(
                vendor_id=runs[run_id].vendor_id,
                vendor=names.get(runs[run_id].vendor_id, ""),
                assessment_id=runs[run_id].pk,
                rule_id=rule_id,
                severity=severity,
            )
            for run_id, rule_id, severity in findings
        ),
        key=lambda f: (f.vendor.casefold(), f.vendor_id),
    )
    sign_offs: dict[int, Review] = {}
    reviews = Review.objects.filter(run_id__in=list(runs)).select_related(
        "reviewer", "assessment__vendor"
    )
    for review in reviews.order_by("-created_at", "-pk"):
        sign_offs.setdefault(review.assessment_id, review)
    return PortfolioStanding(
        today=today,
        vendors=[VendorStanding(vendor, current.get(vendor.pk)) for vendor in vendors],
        open_findings=open_findings,
        sign_offs=sorted(sign_offs.values(), key=lambda r: (r.created_at, r.pk), reverse=True),
        risk_decisions=list(
            RiskDecision.objects.filter(assessment__in=list(current.values()))
            .select_related("assessment__vendor")
            .order_by("expires_on", "pk")
        ),
        deadlines=deadlines_for(
            organization=organization,
            today=today,
            horizon=today + dt.timedelta(days=horizon_days),
        ),
    )
