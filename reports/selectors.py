"""Reads of reports. Every function takes the organization: another organization's report is
simply not found (`Http404`), so "missing" and "forbidden" look the same."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from assessments.models import Assessment

from .models import Report


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
