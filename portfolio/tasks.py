"""Celery tasks of the portfolio. A task takes ids and calls one service."""

from __future__ import annotations

from celery import shared_task

from scoring.tasks import TRANSIENT_ERRORS


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
    time_limit=600,
    soft_time_limit=540,
)
def rescore_chunk(self, batch_id: int, item_ids: list[int]) -> int:  # noqa: ANN001
    from .services import rescore_chunk_run

    try:
        return rescore_chunk_run(batch_id=batch_id, item_ids=item_ids)
    except TRANSIENT_ERRORS as exc:
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc


@shared_task(acks_late=True, reject_on_worker_lost=True, time_limit=300, soft_time_limit=280)
def rescore_batch_fan_out(batch_id: int) -> int:
    """Queues the chunks of a new batch (a chunk that is queued twice is harmless)."""
    from .services import rescore_batch_fan_out_run

    return rescore_batch_fan_out_run(batch_id=batch_id)


@shared_task(ignore_result=True, time_limit=120, soft_time_limit=100)
def resume_stalled_rescore_batches() -> int:
    """Run by Celery beat every minute."""
    from .services import rescore_batches_resume

    return rescore_batches_resume()


@shared_task(ignore_result=True, time_limit=900, soft_time_limit=840)
def send_reminders() -> None:
    """Run by Celery beat every hour: the sweep is idempotent, each email leaves once."""
    from .reminders import reminders_send

    reminders_send()
