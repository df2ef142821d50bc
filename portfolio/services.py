"""Writes of the portfolio: making a rescore batch and carrying it out in chunks.

A batch is made in one transaction (its items name every assessment, with the run that was its
latest); its chunks are queued once that commits. A task fans the items out in chunks; a chunk task takes item ids and scores each
item that is not finished yet through the one scoring service, so a chunk delivered twice, or
again after a worker died in the middle of it, finishes what is left and counts nothing twice.
A batch that stops moving (its messages lost with a broker or a worker) is queued again by
`rescore_batches_resume`, which Celery beat runs.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.audit import audit_record
from assessments.models import Assessment, Finding, RunStatus, ScoringRun
from assessments.queueing import publish, publish_on_commit
from assessments.scoring_runs import scoring_run_execute, scoring_run_fail
from assessments.services.submission import scoring_run_create
from core.errors import ForbiddenError, ServiceError
from core.tasks import TRANSIENT_ERRORS
from scoring.models import Ruleset
from scoring.registry import split_key

from .models import BatchStatus, ItemState, RescoreBatch, RescoreItem
from .selectors import RESCORABLE_STATUSES, rescore_candidates
from .tasks import rescore_batch_fan_out, rescore_chunk

logger = logging.getLogger(__name__)

FINISHED = (ItemState.DONE, ItemState.FAILED)


def ruleset_for_key(key: str) -> Ruleset:
    """The published ruleset `slug@version`, or a 400 naming it."""
    try:
        slug, version = split_key(str(key))
    except ValueError:
        slug = version = ""
    ruleset = Ruleset.objects.filter(slug=slug, version=version).first()
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
    ruleset = ruleset_for_key(ruleset_key)
    filters = {key: value for key, value in (filters or {}).items() if value}
    if assessment_ids is None:
        assessments = list(
            rescore_candidates(organization=organization, ruleset=ruleset, **filters)
        )
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
    publish_on_commit(rescore_batch_fan_out, batch.pk)
    return batch


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
        publish(rescore_chunk, batch_id, list(item_ids[start : start + size]))


def rescore_chunk_run(*, batch_id: int, item_ids: Sequence[int]) -> int:
    """Score the chunk's unfinished items; returns how many this call finished."""
    now = timezone.now()
    RescoreBatch.objects.filter(pk=batch_id, status=BatchStatus.QUEUED).update(
        status=BatchStatus.RUNNING, started_at=now, progressed_at=now
    )
    pending = (
        RescoreItem.objects.filter(batch_id=batch_id, pk__in=list(item_ids))
        .exclude(state__in=FINISHED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    finished = sum(rescore_item_run(item_id=item_id) for item_id in list(pending))
    # Progress is noted per chunk, not per item: one row every worker would write per item
    # would make the workers wait for each other.
    RescoreBatch.objects.filter(pk=batch_id).update(progressed_at=timezone.now())
    rescore_batch_settle(batch_id=batch_id)
    return finished


def rescore_item_run(*, item_id: int) -> bool:
    """Make (once) and carry out the item's run; True if this call finished the item."""
    item = RescoreItem.objects.select_related("batch__ruleset").filter(pk=item_id).first()
    if item is None or item.state in FINISHED:
        return False
    if item.run_id is None:
        with transaction.atomic():
            assessment = Assessment.objects.get(pk=item.assessment_id)
            run = scoring_run_create(
                assessment=assessment,
                ruleset=item.batch.ruleset,
                requested_by=item.batch.requested_by,
            )
            made = RescoreItem.objects.filter(pk=item.pk, run__isnull=True).update(
                run=run, state=ItemState.RUNNING
            )
            if not made:  # another process made this item's run first: keep only that one
                transaction.set_rollback(True)
        item.refresh_from_db()
    try:
        # The score and the item's end in one commit (a commit is most of an item's time on
        # SQLite): a worker that dies in between leaves both undone, and the next delivery
        # redoes both.
        with transaction.atomic():
            run = scoring_run_execute(run_id=item.run_id)
            if run is not None:
                return _item_finish(item, run)
    except TRANSIENT_ERRORS:
        raise  # the chunk task tries again; the item stays unfinished
    except Exception as exc:  # permanent: recorded on the run, the assessment keeps its result
        scoring_run_fail(run_id=item.run_id, error=f"{type(exc).__name__}: {exc}")
    with transaction.atomic():
        return _item_finish(item, ScoringRun.objects.get(pk=item.run_id))


def _item_finish(item: RescoreItem, run: ScoringRun) -> bool:
    now = timezone.now()
    if run.status == RunStatus.SUCCEEDED:
        after = set(Finding.objects.filter(run=run).values_list("rule_id", flat=True))
        before = set(
            Finding.objects.filter(run_id=item.before_run_id).values_list("rule_id", flat=True)
        )
        fields: dict[str, Any] = {
            "state": ItemState.DONE,
            "added": sorted(after - before),
            "removed": sorted(before - after),
            "error": "",
        }
    else:
        fields = {"state": ItemState.FAILED, "error": run.error or _("Scoring did not finish.")}
    finished = (
        RescoreItem.objects.filter(pk=item.pk)
        .exclude(state__in=FINISHED)
        .update(finished_at=now, **fields)
    )
    return bool(finished)


def rescore_batch_settle(*, batch_id: int) -> str | None:
    """Mark the batch done (or failed, if any item failed) once no item is left; its status."""
    if RescoreItem.objects.filter(batch_id=batch_id).exclude(state__in=FINISHED).exists():
        return None
    failed = RescoreItem.objects.filter(batch_id=batch_id, state=ItemState.FAILED).exists()
    status = BatchStatus.FAILED if failed else BatchStatus.DONE
    RescoreBatch.objects.filter(
        pk=batch_id, status__in=[BatchStatus.QUEUED, BatchStatus.RUNNING]
    ).update(status=status, finished_at=timezone.now())
    return status


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
    "rescore_item_run",
    "ruleset_for_key",
]
