"""Reads of the portfolio: which assessments a ruleset would score differently, rescore batches
and their impact. Every function takes the organization (or a batch already found within it).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page
from django.db.models import Case, Count, Q, QuerySet, When
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from assessments.models import Assessment, AssessmentStatus, RiskTier
from assessments.selectors import assessments_for
from core.pagination import CountedPaginator, cached_count
from questionnaires.spec import version_key
from scoring.models import Ruleset
from scoring.selectors import rulesets_visible_to

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


def rulesets_newest_first(*, organization: Organization) -> list[Ruleset]:
    """The published rulesets the organization may rescore with (shipped, its own, shared with
    it), newest first."""
    rulesets = rulesets_visible_to(organization=organization).prefetch_related("applies_to")
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
    reference: str = ""  # "#12 · label": which of the vendor's assessments

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
    return [_change(item) for item in _rescored_items(batch).iterator(chunk_size=2000)]


def batch_changes_page(*, batch: RescoreBatch, number: object, per_page: int) -> tuple[Page, int]:
    """One page of `batch_changes`, ordered and sliced by the database, and how many of all the
    batch's changes are for the worse. A finished batch no longer changes: both counts are
    cached, keyed by its state."""
    items = _rescored_items(batch)
    version = (batch.pk, batch.status, batch.progressed_at, batch.finished_at)
    page = CountedPaginator(items, per_page, version=version).get_page(number)
    page.object_list = [_change(item) for item in page.object_list]
    worse = cached_count(items.filter(Q(tier_step__gt=0) | Q(score_step__gt=0)), version=version)
    return page, worse


def _rescored_items(batch: RescoreBatch) -> QuerySet[RescoreItem]:
    """The batch's rescored items, in `batch_changes`'s order, with only the columns a change
    shows: a run's snapshots and a ruleset's rules stay in the database (reading them made a
    batch of 10,000 take half a minute)."""

    def tier_rank(run: str) -> Case:
        ranks = [When(**{f"{run}__risk_tier": tier}, then=rank) for tier, rank in TIER_RANK.items()]
        return Case(*ranks, default=-1)

    return (
        RescoreItem.objects.filter(batch=batch, state=ItemState.DONE)
        .select_related("assessment__vendor", "before_run__ruleset", "run__ruleset")
        .only(
            "added",
            "removed",
            "assessment__vendor__name",
            "assessment__number",
            "assessment__label",
            *(
                f"{run}__{field}"
                for run in ("before_run", "run")
                for field in ("risk_score", "risk_tier", "ruleset__slug", "ruleset__version")
            ),
        )
        .annotate(
            tier_step=tier_rank("run") - tier_rank("before_run"),
            score_step=Coalesce("run__risk_score", 0) - Coalesce("before_run__risk_score", 0),
        )
        .order_by("-tier_step", "-score_step", "assessment__vendor__name", "assessment_id")
    )


def _change(item: RescoreItem) -> Change:
    return Change(
        assessment_id=item.assessment_id,
        vendor=item.assessment.vendor.name,
        reference=item.assessment.reference,
        before=_result(item.before_run),
        after=_result(item.run),
        added=list(item.added),
        removed=list(item.removed),
    )


def batch_failures(*, batch: RescoreBatch) -> list[Failure]:
    items = (
        RescoreItem.objects.filter(batch=batch, state=ItemState.FAILED)
        .select_related("assessment__vendor")
        .only("error", "assessment__vendor__name")
        .order_by("assessment__vendor__name", "pk")
    )
    return [Failure(item.assessment_id, item.assessment.vendor.name, item.error) for item in items]


def _result(run: object) -> Result:
    if run is None:
        return Result(ruleset="", risk_score=None, risk_tier="")
    return Result(ruleset=run.ruleset.key, risk_score=run.risk_score, risk_tier=run.risk_tier)
