"""The sweeper: queues again the scoring runs and reports whose broker message was lost.

A message is lost when Redis was down as the request committed (the publish failed after the
row was saved), when Redis restarted without its data, or when a worker died holding it and the
broker never handed it out again. The rows say what is owed: a run or report `queued` for longer
than SWEEPER_QUEUED_AFTER, or `running`/`rendering` for longer than its task's hard time limit
(no worker can still be on it), is published again. Running the same work twice is harmless:
both tasks are idempotent and keep exactly one result.

Celery beat runs `requeue_stuck_task` every SWEEPER_INTERVAL seconds; `manage.py requeue_stuck`
does the same once, by hand.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from celery import Task, shared_task
from django.conf import settings
from django.db.models import Model, Q
from django.utils import timezone

from assessments.models import RunStatus, ScoringRun
from assessments.tasks import score_assessment_run
from core.queueing import publish
from reports.models import PortfolioReport, Report, ReportStatus
from reports.tasks import render_portfolio_report_task, render_report_task

logger = logging.getLogger(__name__)

BATCH_SIZE = 500


@dataclass(frozen=True)
class QueuedWork:
    name: str
    model: type[Model]
    task: Task
    queued: str
    running: str


def _kinds() -> tuple[QueuedWork, ...]:
    return (
        QueuedWork("scoring runs", ScoringRun, score_assessment_run, RunStatus.QUEUED, RunStatus.RUNNING),
        QueuedWork("reports", Report, render_report_task, ReportStatus.QUEUED, ReportStatus.RENDERING),
        QueuedWork("portfolio reports", PortfolioReport, render_portfolio_report_task, ReportStatus.QUEUED, ReportStatus.RENDERING),
    )  # fmt: skip


def _running_limit(task: Task) -> dt.timedelta:
    # A worker that is alive ends (or kills) the task at its hard time limit; a little more,
    # so that a task finishing right at the limit is not queued again.
    limit = task.time_limit or settings.CELERY_TASK_TIME_LIMIT
    return dt.timedelta(seconds=limit + 10)


def requeue_stuck(*, now: dt.datetime | None = None) -> dict[str, int]:
    """Publish every stuck run and report again; returns how many of each were queued."""
    now = now or timezone.now()
    queued_before = now - dt.timedelta(seconds=settings.SWEEPER_QUEUED_AFTER)
    counts: dict[str, int] = {}
    for kind in _kinds():
        stuck = list(
            kind.model._default_manager.filter(
                Q(status=kind.queued, dispatched_at__lt=queued_before)
                | Q(status=kind.running, dispatched_at__lt=now - _running_limit(kind.task))
            )
            .order_by("dispatched_at")
            .values_list("pk", "dispatched_at")[:BATCH_SIZE]
        )
        counts[kind.name] = 0
        for pk, dispatched_at in stuck:
            # Only one sweeper (beat, or the command run by hand) claims each row.
            claimed = kind.model._default_manager.filter(pk=pk, dispatched_at=dispatched_at).update(
                dispatched_at=now
            )
            if claimed and publish(kind.task, pk):
                counts[kind.name] += 1
    if any(counts.values()):
        logger.warning("sweeper queued again: %s", counts)
    return counts


@shared_task(ignore_result=True, time_limit=120, soft_time_limit=100)
def requeue_stuck_task() -> dict[str, int]:
    return requeue_stuck()
