"""Celery tasks of the portfolio. A task takes ids and calls one service."""

from __future__ import annotations

import logging

from celery import Task, shared_task

from core.tasks import run_or_record_failure

from .reminders import reminders_send
from .services import (
    CHUNK_TASK,
    FAN_OUT_TASK,
    rescore_batch_fan_out_run,
    rescore_batches_resume,
    rescore_chunk_run,
)

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
    time_limit=600,
    soft_time_limit=540,
    name=CHUNK_TASK,
)
def rescore_chunk(self: Task, batch_id: int, item_ids: list[int]) -> int | None:
    # Each item records its own permanent failure; a chunk that fails as a whole leaves its
    # items unfinished for the resume sweep, and says why in the log.
    return run_or_record_failure(
        self,
        lambda: rescore_chunk_run(batch_id=batch_id, item_ids=item_ids),
        lambda reason: logger.error("rescore chunk of batch %s failed: %s", batch_id, reason),
        too_slow="the chunk took longer than the time limit",
    )


@shared_task(
    name=FAN_OUT_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    time_limit=300,
    soft_time_limit=280,
)
def rescore_batch_fan_out(batch_id: int) -> int:
    """Queues the chunks of a new batch (a chunk that is queued twice is harmless)."""
    return rescore_batch_fan_out_run(batch_id=batch_id)


@shared_task(ignore_result=True, time_limit=120, soft_time_limit=100)
def resume_stalled_rescore_batches() -> int:
    """Run by Celery beat every minute."""
    return rescore_batches_resume()


@shared_task(ignore_result=True, time_limit=900, soft_time_limit=840)
def send_reminders() -> None:
    """Run by Celery beat every hour: the sweep is idempotent, each email leaves once."""
    reminders_send()
