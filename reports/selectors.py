"""Reads of reports. Every function takes the organization: another organization's report is
simply not found (`Http404`), so "missing" and "forbidden" look the same."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from assessments.models import Assessment, Review

from .models import PortfolioKind, PortfolioReport, Report


def reports_for(
    *, organization: Organization, assessment: Assessment | None = None
) -> QuerySet[Report]:
    reports = Report.objects.filter(organization=organization).select_related(
        "assessment__vendor", "run__ruleset", "requested_by"
    )
    if assessment is not None:
        reports = reports.filter(assessment=assessment)
    return reports


def report_get(*, organization: Organization, report_id: object) -> Report:
    return get_object_or_404(reports_for(organization=organization), pk=report_id)


def portfolio_reports_for(
    *, organization: Organization, kind: str = PortfolioKind.ORGANIZATION
) -> QuerySet[PortfolioReport]:
    return PortfolioReport.objects.filter(organization=organization, kind=kind).select_related(
        "requested_by", "previous"
    )


def portfolio_report_get(*, organization: Organization, report_id: object) -> PortfolioReport:
    return get_object_or_404(
        PortfolioReport.objects.filter(organization=organization).select_related(
            "requested_by", "previous"
        ),
        pk=report_id,
    )


@dataclass(frozen=True)
class ReportCurrency:
    """Whether a report still says what AVIA says now about its assessment."""

    # The run that has replaced the report's run as the assessment's result.
    superseded_by: int | None
    # The decision taken after the report was made (the report does not show it).
    decided_after: Review | None

    @property
    def is_current(self) -> bool:
        return self.superseded_by is None and self.decided_after is None


def report_currency(*, report: Report) -> ReportCurrency:
    assessment = report.assessment
    latest = assessment.latest_run_id
    made = report.rendered_at or report.created_at
    decided_after = (
        Review.objects.filter(assessment=assessment, created_at__gt=made)
        .order_by("-created_at", "-pk")
        .first()
    )
    return ReportCurrency(
        superseded_by=latest if latest and latest != report.run_id else None,
        decided_after=decided_after,
    )
