"""Reads of tenant data. Every function takes the organization: this is where tenancy lives.

An object of another organization is simply not found (`Http404` via `get_object_or_404`), so
"missing" and "forbidden" look the same and ids cannot be probed.
"""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from accounts.models import Organization

from .models import (
    Assessment,
    AuditEvent,
    EvidenceFile,
    Finding,
    Review,
    ScoringRun,
    Vendor,
    VendorLink,
)


def vendors_for(*, organization: Organization) -> QuerySet[Vendor]:
    return Vendor.objects.filter(organization=organization)


def vendor_get(*, organization: Organization, vendor_id: object) -> Vendor:
    return get_object_or_404(vendors_for(organization=organization), pk=vendor_id)


def assessments_for(*, organization: Organization) -> QuerySet[Assessment]:
    latest_decision = (
        Review.objects.filter(assessment=OuterRef("pk"))
        .order_by("-created_at", "-pk")
        .values("decision")[:1]
    )
    return (
        Assessment.objects.filter(organization=organization)
        .select_related("vendor", "questionnaire", "latest_run__ruleset")
        .annotate(latest_decision=Subquery(latest_decision))
    )


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
