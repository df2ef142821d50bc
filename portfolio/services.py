"""Writes of the portfolio: making a rescore batch and carrying it out in chunks.

A batch is made in one transaction (its items name every assessment, with the run that was its
latest); its chunks are queued once that commits. A task fans the items out in chunks; a chunk
task takes item ids, makes the runs of its unfinished items that have none (once, in one
statement) and scores them together through the one scoring service
(`scoring_runs_execute`: answers, evidence and findings read and written in bulk), ending the
items in the same commit. So a chunk delivered twice, or again after a worker died in the
middle of it, finishes what is left and counts nothing twice. When the chunk cannot be scored
together, each item goes on alone and only the one that fails is recorded as failed.
A batch that stops moving (its messages lost with a broker or a worker) is queued again by
`rescore_batches_resume`, which Celery beat runs.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Organization
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.audit import audit_record
from assessments.bulk import update_fields
from assessments.models import Assessment, RunStatus, ScoringRun
from assessments.services.scoring_runs import (
    scoring_run_fail,
    scoring_runs_claim,
    scoring_runs_execute,
)
from assessments.services.submission import scoring_runs_create
from core.db import lock_row
from core.errors import ConflictError, ForbiddenError, ServiceError
from core.queueing import publish, publish_on_commit
from core.tasks import TRANSIENT_ERRORS
from outbox.links import site_url
from scoring.models import Ruleset
from scoring.registry import split_key
from scoring.results import rule_changes
from scoring.selectors import ruleset_visible
from webhooks.events import WebhookEvent
from webhooks.services import webhook_emit

from .models import BatchStatus, ItemState, RescoreBatch, RescoreItem
from .selectors import RESCORABLE_STATUSES, rescore_candidates, rules_fired_in

logger = logging.getLogger(__name__)

FINISHED = (ItemState.DONE, ItemState.FAILED)

# The Celery tasks of a batch (`tasks.py`, which imports these services), queued by their names.
FAN_OUT_TASK = "portfolio.tasks.rescore_batch_fan_out"
CHUNK_TASK = "portfolio.tasks.rescore_chunk"


def ruleset_for_key(key: str, *, organization: Organization) -> Ruleset:
    """The published ruleset `slug@version` the organization may use, or a 400 naming it."""
    try:
        slug, version = split_key(str(key))
    except ValueError:
        slug = version = ""
    ruleset = ruleset_visible(organization=organization, slug=slug, version=version)
    if ruleset is None:
        raise ServiceError({"ruleset": [_("Unknown ruleset “%(key)s”.") % {"key": key}]})
    return ruleset


@transaction.atomic
def rescore_batch_create(
    *,
    member: OrgContext,
    ruleset_key: str,
    channel: str,
    assessment_ids: Sequence[int] | None = None,
    filters: dict[str, str] | None = None,
) -> RescoreBatch:
    """Rescore `assessment_ids` (default: every candidate, narrowed by `filters` — `vendor`,
    `tier`) with the ruleset; nothing is saved when any id is refused."""
    if not member.can(Capability.EDIT_ASSESSMENT):
        raise ForbiddenError({"assessments": [_("Your role cannot rescore assessments.")]})
    organization = member.organization
    ruleset = ruleset_for_key(ruleset_key, organization=organization)
    filters = {key: value for key, value in (filters or {}).items() if value}
    # Two requests (a double click, a client sending again) queue here: the second sees the
    # first's batch, and no assessment is rescored by two batches at once.
    lock_row(Organization, organization.pk)
    busy = _being_rescored(organization)
    if assessment_ids is None:
        candidates = list(rescore_candidates(organization=organization, ruleset=ruleset, **filters))
        assessments = [a for a in candidates if a.pk not in busy]
        if candidates and not assessments:
            raise ConflictError({"assessments": _busy_messages(candidates, busy)})
        if not assessments:
            raise ServiceError(
                {
                    "assessments": [
                        _(
                            "No assessment to rescore: none is scored with a ruleset other than %(key)s."
                        )
                        % {"key": ruleset.key}
                    ]
                }
            )
    else:
        assessments = _chosen_assessments(organization, ruleset, assessment_ids)
        if any(a.pk in busy for a in assessments):
            raise ConflictError({"assessments": _busy_messages(assessments, busy)})
    batch = RescoreBatch.objects.create(
        organization=organization,
        ruleset=ruleset,
        total=len(assessments),
        filters=filters,
        requested_by=member.user,
    )
    RescoreItem.objects.bulk_create(
        (
            RescoreItem(batch=batch, assessment=a, before_run_id=a.latest_run_id)
            for a in assessments
        ),
        batch_size=1000,
    )
    audit_record(
        organization=organization,
        action="rescore_batch.requested",
        actor=member.user,
        channel=channel,
        detail={"batch": batch.pk, "ruleset": ruleset.key, "total": batch.total, **filters},
    )
    # One message now; a worker fans the chunks out (thousands of publishes would hold up
    # the request).
    publish_on_commit(FAN_OUT_TASK, batch.pk)
    return batch


def _being_rescored(organization: Organization) -> dict[int, int]:
    """The organization's assessments that an unfinished batch is rescoring: {id: batch id}."""
    return dict(
        RescoreItem.objects.filter(
            batch__organization=organization,
            batch__status__in=[BatchStatus.QUEUED, BatchStatus.RUNNING],
        )
        .exclude(state__in=FINISHED)
        .values_list("assessment_id", "batch_id")
    )


def _busy_messages(assessments: Sequence[Assessment], busy: dict[int, int]) -> list[str]:
    by_batch: dict[int, list[int]] = defaultdict(list)
    for assessment in assessments:
        if assessment.pk in busy:
            by_batch[busy[assessment.pk]].append(assessment.pk)
    return [
        _("Batch %(batch)s is rescoring these already: %(ids)s.")
        % {"batch": batch_id, "ids": _ids(ids)}
        for batch_id, ids in sorted(by_batch.items())
    ]


def _chosen_assessments(
    organization: Any, ruleset: Ruleset, assessment_ids: Sequence[int]
) -> list[Assessment]:
    wanted = list(dict.fromkeys(assessment_ids))
    found = {
        a.pk: a
        for a in Assessment.objects.filter(organization=organization, pk__in=wanted)
        .select_related("questionnaire")
        .order_by()
    }
    scorable = set(ruleset.applies_to.values_list("pk", flat=True))
    unknown = [pk for pk in wanted if pk not in found]
    not_scored = [
        pk for pk in wanted if pk in found and found[pk].status not in RESCORABLE_STATUSES
    ]
    other_questionnaire = [
        pk for pk in wanted if pk in found and found[pk].questionnaire_id not in scorable
    ]
    messages = []
    if unknown:
        messages.append(
            _("Not assessments of this organization: %(ids)s.") % {"ids": _ids(unknown)}
        )
    if not_scored:
        messages.append(
            _("Not scored, or being scored or changed now: %(ids)s.") % {"ids": _ids(not_scored)}
        )
    if other_questionnaire:
        messages.append(
            _("%(ruleset)s does not score the questionnaire of: %(ids)s.")
            % {"ruleset": ruleset.key, "ids": _ids(other_questionnaire)}
        )
    if not wanted:
        messages.append(_("Name at least one assessment, or leave the list out."))
    if messages:
        raise ServiceError({"assessments": messages})
    return [found[pk] for pk in wanted]


def _ids(ids: Iterable[int]) -> str:
    return ", ".join(str(pk) for pk in ids)


def _item_ids(batch: RescoreBatch, *, unfinished: bool = False) -> list[int]:
    items = RescoreItem.objects.filter(batch=batch)
    if unfinished:
        items = items.exclude(state__in=FINISHED)
    return list(items.order_by("pk").values_list("pk", flat=True))


def rescore_batch_fan_out_run(*, batch_id: int) -> int:
    """Queue the chunks of the batch's unfinished items; returns how many items."""
    item_ids = _item_ids(RescoreBatch(pk=batch_id), unfinished=True)
    _queue_chunks(batch_id, item_ids)
    return len(item_ids)


def _queue_chunks(batch_id: int, item_ids: Sequence[int]) -> None:
    """Fan the items out in chunks, so that every worker process takes a share. A chunk the
    broker cannot take now is left to `rescore_batches_resume` (the batch stalls, then resumes)."""
    size = settings.RESCORE_CHUNK_SIZE
    for start in range(0, len(item_ids), size):
        publish(CHUNK_TASK, batch_id, list(item_ids[start : start + size]))


def rescore_chunk_run(*, batch_id: int, item_ids: Sequence[int]) -> int:
    """Score the chunk's unfinished items together; returns how many this call finished."""
    now = timezone.now()
    RescoreBatch.objects.filter(pk=batch_id, status=BatchStatus.QUEUED).update(
        status=BatchStatus.RUNNING, started_at=now, progressed_at=now
    )
    items = _items_with_runs(batch_id, item_ids)
    try:
        finished = _items_score(items)
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        # One assessment that cannot be scored must not sink the others: each goes on alone,
        # and only the one that fails is recorded as failed.
        logger.warning(
            "rescore chunk of batch %s: %s items together failed; scoring them one by one",
            batch_id,
            len(items),
            exc_info=True,
        )
        finished = sum(_item_score_alone(item) for item in items)
    # Progress is noted per chunk, not per item: one row every worker would write per item
    # would make the workers wait for each other.
    RescoreBatch.objects.filter(pk=batch_id).update(progressed_at=timezone.now())
    rescore_batch_settle(batch_id=batch_id)
    return finished


def _unfinished(item_ids: Sequence[int], *, rows: QuerySet[RescoreItem]) -> list[RescoreItem]:
    """The unfinished items among `item_ids` (of `rows`: a batch's, or locked), in id order."""
    return list(
        rows.only("run", "before_run", "state")
        .filter(pk__in=list(item_ids))
        .exclude(state__in=FINISHED)
        .order_by("pk")
    )


def _unfinished_items(batch_id: int, item_ids: Sequence[int]) -> list[RescoreItem]:
    return _unfinished(item_ids, rows=RescoreItem.objects.filter(batch_id=batch_id))


def _items_with_runs(batch_id: int, item_ids: Sequence[int]) -> list[RescoreItem]:
    """The chunk's unfinished items, each with its run: made here, in one statement, for the
    items that have none yet, and never twice."""
    items = _unfinished_items(batch_id, item_ids)
    without = [item.pk for item in items if item.run_id is None]
    if not without:
        return items
    with transaction.atomic():
        # Locked, and read again under the lock: a delivery that waited here finds the runs
        # made. (SQLite has one writer: a second transaction that read before the first wrote
        # is refused its write, a transient error the chunk task retries.)
        claimed = list(
            RescoreItem.objects.select_for_update(of=("self",))
            .select_related("assessment")
            .only("run", "state", "assessment__submitted_at")
            .filter(pk__in=without, run__isnull=True)
            .order_by("pk")
        )
        if claimed:
            batch = (
                RescoreBatch.objects.select_related("ruleset", "requested_by", "organization")
                .defer("ruleset__content", "organization__logo")
                .get(pk=batch_id)
            )
            runs = scoring_runs_create(
                assessments=[item.assessment for item in claimed],
                organization=batch.organization,
                ruleset=batch.ruleset,
                requested_by=batch.requested_by,
            )
            for item, run in zip(claimed, runs, strict=True):
                item.run, item.state = run, ItemState.RUNNING
            update_fields(claimed, ["run", "state"])
    return [item for item in _unfinished_items(batch_id, item_ids) if item.run_id is not None]


def _items_score(items: Sequence[RescoreItem]) -> int:
    """Score the items' runs in one go (`scoring_runs_execute`) and end the items in the same
    commit: a worker that dies in between leaves both undone, and the next delivery redoes
    both. Returns how many items this call finished."""
    if not items:
        return 0
    # The attempt is counted before the transaction below: a worker killed while scoring rolls
    # that back, and a run that kills its worker every time must still reach the cap.
    run_ids = [item.run_id for item in items if item.run_id is not None]
    scoring_runs_claim(run_ids=run_ids)
    with transaction.atomic():
        # The items are locked first (another delivery of the chunk waits here, then finds
        # them finished), and what does not depend on the new runs is read before scoring:
        # once the audit trail's head is locked, little is left to do before the commit.
        open_items = _locked_unfinished([item.pk for item in items])
        if not open_items:
            return 0
        before = rules_fired_in([item.before_run_id for item in open_items if item.before_run_id])
        runs = scoring_runs_execute(run_ids=[item.run_id for item in open_items], claimed=True)
        return _items_finish(open_items, runs, before)


def _locked_unfinished(item_ids: Sequence[int]) -> list[RescoreItem]:
    return _unfinished(item_ids, rows=RescoreItem.objects.select_for_update(of=("self",)))


def _item_score_alone(item: RescoreItem) -> int:
    """Score one item's run on its own; a permanent failure is recorded on the run and the
    item (the assessment keeps its result), a transient one is raised for the chunk's retry."""
    try:
        return _items_score([item])
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        scoring_run_fail(run_id=item.run_id, error=f"{type(exc).__name__}: {exc}")
    with transaction.atomic():
        open_items = _locked_unfinished([item.pk])
        before = rules_fired_in([item.before_run_id] if item.before_run_id else [])
        return _items_finish(open_items, ScoringRun.objects.in_bulk([item.run_id]), before)


def _items_finish(
    open_items: Sequence[RescoreItem],
    runs: dict[int, ScoringRun],
    before: dict[int, set[str]],
) -> int:
    """End the items (locked, unfinished) whose run finished: done with the findings added and
    removed since `before` (the rules of each item's old run), or failed with the run's error."""
    after = rules_fired_in([run.pk for run in runs.values() if run.status == RunStatus.SUCCEEDED])
    now = timezone.now()
    ended = []
    for item in open_items:
        run = runs.get(item.run_id)
        if run is not None and run.status == RunStatus.SUCCEEDED:
            item.state, item.error = ItemState.DONE, ""
            item.added, item.removed = rule_changes(before[item.before_run_id], after[run.pk])
        elif run is None or run.status == RunStatus.FAILED:
            item.state = ItemState.FAILED
            item.error = (run.error if run else "") or _("Scoring did not finish.")
        else:
            continue  # still running elsewhere: its own delivery ends it
        item.finished_at = now
        ended.append(item)
    update_fields(ended, ["state", "added", "removed", "error", "finished_at"])
    return len(ended)


def rescore_batch_settle(*, batch_id: int) -> str | None:
    """Mark the batch done (or failed, if any item failed) once no item is left; its status."""
    if RescoreItem.objects.filter(batch_id=batch_id).exclude(state__in=FINISHED).exists():
        return None
    failed = RescoreItem.objects.filter(batch_id=batch_id, state=ItemState.FAILED).exists()
    status = BatchStatus.FAILED if failed else BatchStatus.DONE
    with transaction.atomic():
        settled = RescoreBatch.objects.filter(
            pk=batch_id, status__in=[BatchStatus.QUEUED, BatchStatus.RUNNING]
        ).update(status=status, finished_at=timezone.now())
        if settled:  # this call ended it: its event, once
            _batch_finished_emit(RescoreBatch.objects.select_related("ruleset").get(pk=batch_id))
    return status


def _batch_finished_emit(batch: RescoreBatch) -> None:
    items = RescoreItem.objects.filter(batch=batch)
    webhook_emit(
        organization=batch.organization,
        event=WebhookEvent.RESCORE_BATCH_FINISHED,
        event_key=f"rescore_batch.finished:{batch.pk}",
        data={
            "rescore_batch": {
                "id": batch.pk,
                "url": site_url("portfolio:batch", batch.pk),
                "status": batch.status,
                "ruleset": batch.ruleset.key,
                "total": batch.total,
                "failed": items.filter(state=ItemState.FAILED).count(),
            }
        },
    )


def rescore_batches_resume(*, now: dt.datetime | None = None) -> int:
    """Queue again the unfinished items of every batch that has not moved for
    RESCORE_STALL_SECONDS (its messages were lost with a worker or the broker). Returns how many
    batches were resumed. Items still queued somewhere are harmless: a chunk skips what is done."""
    now = now or timezone.now()
    stalled_before = now - dt.timedelta(seconds=settings.RESCORE_STALL_SECONDS)
    stalled = RescoreBatch.objects.filter(
        status__in=[BatchStatus.QUEUED, BatchStatus.RUNNING]
    ).filter(
        Q(progressed_at__lt=stalled_before)
        | Q(progressed_at__isnull=True, created_at__lt=stalled_before)
    )
    resumed = 0
    for batch in stalled.order_by("pk"):
        # Only one sweeper claims each batch.
        if not RescoreBatch.objects.filter(pk=batch.pk, progressed_at=batch.progressed_at).update(
            progressed_at=now
        ):
            continue
        item_ids = _item_ids(batch, unfinished=True)
        if item_ids:
            logger.warning(
                "rescore batch %s stalled: queuing %s items again", batch.pk, len(item_ids)
            )
            _queue_chunks(batch.pk, item_ids)
            resumed += 1
        else:
            rescore_batch_settle(batch_id=batch.pk)
    return resumed


__all__ = [
    "rescore_batch_create",
    "rescore_batch_settle",
    "rescore_batches_resume",
    "rescore_chunk_run",
    "ruleset_for_key",
]
