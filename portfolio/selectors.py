"""Reads of the portfolio: which assessments a ruleset would score differently, rescore batches
and their impact. Every function takes the organization (or a batch already found within it).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page
from django.db.models import Case, Count, Q, QuerySet, When
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from assessments.models import Answer, Assessment, AssessmentStatus, Finding, RiskTier
from assessments.selectors import assessments_for, evidence_for
from assessments.services.scoring_runs import evidence_results
from core.pagination import CountedPaginator, cached_count
from questionnaires.spec import version_key
from questionnaires.validation import stored_values
from scoring.evidence import EvidenceParseResult, stored_parse_result
from scoring.models import Ruleset, RulesetTestCase
from scoring.results import ScoreResult, rule_changes
from scoring.selectors import engine_for, rulesets_visible_to

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
    """One assessment's impact: before and after the batch, and the findings that changed. The
    rule workbench shows a test case the same way (`test_case_id`, its name as `vendor`)."""

    assessment_id: int | None
    vendor: str
    before: Result
    after: Result
    added: list[str]
    removed: list[str]
    reference: str = ""  # "#12 · label": which of the vendor's assessments
    test_case_id: int | None = None

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


def rules_fired_in(run_ids: Sequence[int]) -> dict[int, set[str]]:
    """The rule ids of each run's findings."""
    rules: dict[int, set[str]] = defaultdict(set)
    for run_id, rule_id in Finding.objects.filter(run_id__in=run_ids).values_list(
        "run_id", "rule_id"
    ):
        rules[run_id].add(rule_id)
    return rules


# -- the rule workbench ---------------------------------------------------------------------------

# How many of the organization's assessments the workbench scores on one page (a rescore batch
# scores them all, in the background).
IMPACT_LIMIT = 200


@dataclass(frozen=True)
class AnswerSet:
    """Answers to try in the workbench, validated, with the evidence they carry."""

    values: dict[str, Any]
    evidence: dict[str, list[EvidenceParseResult]]


def workbench_assessments(*, organization: Organization, ruleset: Ruleset) -> list[Assessment]:
    """The organization's assessments whose answers the ruleset scores, to try it on."""
    return list(
        assessments_for(organization=organization)
        .filter(questionnaire__in=ruleset.applies_to.all())
        .select_related("vendor")
        .order_by("vendor__name", "number")[:IMPACT_LIMIT]
    )


def assessment_answer_set(
    *, organization: Organization, ruleset: Ruleset, assessment_id: object
) -> AnswerSet:
    """An assessment's current answers and evidence (another organization's is a 404)."""
    assessment = get_object_or_404(
        assessments_for(organization=organization)
        .filter(questionnaire__in=ruleset.applies_to.all())
        .select_related("questionnaire"),
        pk=assessment_id,
    )
    saved = dict(Answer.objects.filter(assessment=assessment).values_list("question_code", "value"))
    files = list(evidence_for(assessment=assessment).order_by("uploaded_at", "id"))
    return AnswerSet(
        values=stored_values(assessment.questionnaire.spec, saved),
        evidence=evidence_results(assessment, files),
    )


def test_case_values(case: RulesetTestCase) -> dict[str, Any]:
    return stored_values(case.ruleset.questionnaire.spec, case.answers)


def _result_of(ruleset: Ruleset, result: ScoreResult) -> Result:
    return Result(ruleset=ruleset.key, risk_score=result.risk_score, risk_tier=result.risk_tier)


def _worse_first(changes: list[Change]) -> list[Change]:
    return sorted(changes, key=lambda c: (-c.tier_change, -c.score_change, c.vendor))


def test_case_changes(
    *, cases: Iterable[RulesetTestCase], ruleset: Ruleset, as_of: dt.date
) -> list[Change]:
    """Each test case scored with `ruleset`, against the result its author accepted."""
    engine = engine_for(ruleset)
    changes = []
    for case in cases:
        result = engine.score(test_case_values(case), as_of=as_of)
        added, removed = rule_changes(case.findings, result.fired_rule_ids)
        changes.append(
            Change(
                assessment_id=None,
                test_case_id=case.pk,
                vendor=case.name,
                before=Result(case.ruleset.key, case.risk_score, case.risk_tier),
                after=_result_of(ruleset, result),
                added=added,
                removed=removed,
            )
        )
    return changes


def assessment_changes(
    *, organization: Organization, ruleset: Ruleset, as_of: dt.date
) -> tuple[list[Change], int]:
    """How rescoring with `ruleset` would change the organization's assessments a rescore batch
    would take (`rescore_candidates`): each one's latest run — its answers and evidence as
    scored — scored again, worse first; at most `IMPACT_LIMIT` of them, and how many there are."""
    candidates = rescore_candidates(organization=organization, ruleset=ruleset)
    total = candidates.count()
    rows = list(
        candidates.select_related("vendor", "questionnaire", "latest_run__ruleset")[:IMPACT_LIMIT]
    )
    before = rules_fired_in([a.latest_run_id for a in rows if a.latest_run_id])
    engine = engine_for(ruleset)
    changes = []
    for assessment in rows:
        run = assessment.latest_run
        values = stored_values(assessment.questionnaire.spec, run.answers_snapshot or {})
        result = engine.score(values, as_of=as_of, evidence=_snapshot_evidence(run))
        added, removed = rule_changes(before[run.pk], result.fired_rule_ids)
        changes.append(
            Change(
                assessment_id=assessment.pk,
                vendor=assessment.vendor.name,
                reference=assessment.reference,
                before=_result(run),
                after=_result_of(ruleset, result),
                added=added,
                removed=removed,
            )
        )
    return _worse_first(changes), total


def _snapshot_evidence(run: Any) -> dict[str, list[EvidenceParseResult]]:
    """The evidence a run scored, as it recorded the files' parse results."""
    evidence: dict[str, list[EvidenceParseResult]] = {}
    for code, entry in (run.evidence_snapshot or {}).items():
        for data in entry.get("files", []) if isinstance(entry, dict) else []:
            try:
                evidence.setdefault(code, []).append(stored_parse_result(data))
            except ValueError:
                continue
    return evidence


def other_versions(*, organization: Organization, ruleset: Ruleset) -> list[Ruleset]:
    """The other versions of the ruleset the organization may open, newest first: what the
    workbench compares with."""
    others = rulesets_visible_to(organization=organization).filter(slug=ruleset.slug)
    return sorted(
        (r for r in others if r.pk != ruleset.pk),
        key=lambda r: version_key(r.version),
        reverse=True,
    )


def previous_version(*, organization: Organization, ruleset: Ruleset) -> Ruleset | None:
    """The newest version older than `ruleset`, if any."""
    mine = version_key(ruleset.version)
    older = [
        r
        for r in other_versions(organization=organization, ruleset=ruleset)
        if version_key(r.version) < mine
    ]
    return older[0] if older else None
