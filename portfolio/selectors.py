"""Reads of the portfolio: which assessments a ruleset would score differently, rescore batches
and their impact. Every function takes the organization (or a batch already found within it).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from assessments.models import Assessment, AssessmentStatus, RiskTier
from assessments.selectors import assessments_for
from questionnaires.spec import version_key
from scoring.models import Ruleset

from .models import ItemState, RescoreBatch, RescoreItem

# Assessments a batch may score again: scored, or decided on a score. Drafts have nothing to
# score yet; submitted ones are being scored; answers reopened by "changes requested" are being
# edited by the vendor and would be scored half-changed.
RESCORABLE_STATUSES = (
    AssessmentStatus.SCORED,
    AssessmentStatus.APPROVED,
    AssessmentStatus.REJECTED,
)

TIER_RANK = {RiskTier.LOW: 0, RiskTier.MEDIUM: 1, RiskTier.HIGH: 2, RiskTier.CRITICAL: 3}


def rulesets_newest_first() -> list[Ruleset]:
    """Published rulesets (catalogue data, shared by every organization), newest first."""
    rulesets = Ruleset.objects.prefetch_related("applies_to")
    return sorted(rulesets, key=lambda r: (r.slug, version_key(r.version)), reverse=True)


def rescore_candidates(
    *, organization: Organization, ruleset: Ruleset, vendor: str = "", tier: str = ""
) -> QuerySet[Assessment]:
    """The organization's scored assessments whose latest run used another ruleset (version)
    than `ruleset`, among those `ruleset` can score; optionally narrowed by vendor name and tier."""
    candidates = assessments_for(organization=organization).filter(
        status__in=RESCORABLE_STATUSES,
        latest_run__isnull=False,
        questionnaire__in=ruleset.applies_to.all(),
    )
    candidates = candidates.exclude(latest_run__ruleset=ruleset)
    if vendor.strip():
        candidates = candidates.filter(vendor__name__icontains=vendor.strip())
    if tier:
        candidates = candidates.filter(risk_tier=tier)
    return candidates.order_by("vendor__name", "pk")


def rescore_batches_for(*, organization: Organization) -> QuerySet[RescoreBatch]:
    return RescoreBatch.objects.filter(organization=organization).select_related(
        "ruleset", "requested_by"
    )


def rescore_batch_get(*, organization: Organization, batch_id: object) -> RescoreBatch:
    return get_object_or_404(rescore_batches_for(organization=organization), pk=batch_id)


@dataclass(frozen=True)
class BatchProgress:
    total: int
    finished: int  # rescored or failed
    failed: int

    @property
    def percent(self) -> int:
        return round(100 * self.finished / self.total) if self.total else 100


def batch_progress(*, batch: RescoreBatch) -> BatchProgress:
    counts = RescoreItem.objects.filter(batch=batch).aggregate(
        finished=Count("pk", filter=Q(state__in=[ItemState.DONE, ItemState.FAILED])),
        failed=Count("pk", filter=Q(state=ItemState.FAILED)),
    )
    return BatchProgress(total=batch.total, finished=counts["finished"], failed=counts["failed"])


@dataclass(frozen=True)
class Result:
    ruleset: str
    risk_score: int | None
    risk_tier: str


@dataclass(frozen=True)
class Change:
    """One assessment's impact: before and after the batch, and the findings that changed."""

    assessment_id: int
    vendor: str
    before: Result
    after: Result
    added: list[str]
    removed: list[str]

    @property
    def tier_change(self) -> int:
        """Steps up (worse, positive) or down the tiers."""
        return TIER_RANK.get(self.after.risk_tier, -1) - TIER_RANK.get(self.before.risk_tier, -1)

    @property
    def score_change(self) -> int:
        return (self.after.risk_score or 0) - (self.before.risk_score or 0)


@dataclass(frozen=True)
class Failure:
    assessment_id: int
    vendor: str
    error: str


def batch_changes(*, batch: RescoreBatch) -> list[Change]:
    """Every rescored assessment of the batch, who got worse first (more tiers up, then more
    points up), then by vendor."""
    items = (
        RescoreItem.objects.filter(batch=batch, state=ItemState.DONE)
        .select_related("assessment__vendor", "before_run__ruleset", "run__ruleset")
        .order_by("pk")
    )
    changes = [
        Change(
            assessment_id=item.assessment_id,
            vendor=item.assessment.vendor.name,
            before=_result(item.before_run),
            after=_result(item.run),
            added=list(item.added),
            removed=list(item.removed),
        )
        for item in items
    ]
    changes.sort(key=lambda c: (-c.tier_change, -c.score_change, c.vendor, c.assessment_id))
    return changes


def batch_failures(*, batch: RescoreBatch) -> list[Failure]:
    items = (
        RescoreItem.objects.filter(batch=batch, state=ItemState.FAILED)
        .select_related("assessment__vendor")
        .order_by("assessment__vendor__name", "pk")
    )
    return [Failure(item.assessment_id, item.assessment.vendor.name, item.error) for item in items]


def _result(run: object) -> Result:
    if run is None:
        return Result(ruleset="", risk_score=None, risk_tier="")
    return Result(ruleset=run.ruleset.key, risk_score=run.risk_score, risk_tier=run.risk_tier)
