"""Reads of the probe. Every function takes the organization: another organization's set-up
or run is simply not found (`Http404`), so "missing" and "forbidden" look the same."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from assessments.models import Assessment

from .models import ProbeRun, ProbeRunStatus, ProbeSetup


def probe_setup_for(*, organization: Organization, assessment: Assessment) -> ProbeSetup | None:
    return (
        ProbeSetup.objects.filter(organization=organization, assessment=assessment)
        .select_related("entered_by", "entered_by_link")
        .first()
    )


def probe_runs_for(
    *, organization: Organization, assessment: Assessment | None = None
) -> QuerySet[ProbeRun]:
    runs = ProbeRun.objects.filter(organization=organization).select_related(
        "assessment__vendor", "requested_by"
    )
    if assessment is not None:
        runs = runs.filter(assessment=assessment)
    return runs


def probe_run_get(*, organization: Organization, probe_run_id: object) -> ProbeRun:
    return get_object_or_404(probe_runs_for(organization=organization), pk=probe_run_id)


def probe_run_latest_done(*, organization: Organization, assessment: Assessment) -> ProbeRun | None:
    """The newest finished probe of an assessment: the PRB-02 evidence a report shows."""
    return (
        probe_runs_for(organization=organization, assessment=assessment)
        .filter(status=ProbeRunStatus.DONE)
        .first()
    )
