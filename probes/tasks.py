"""Celery task of the probe. It takes the run's id and calls one service."""

from __future__ import annotations

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded

from core.tasks import TRANSIENT_ERRORS

from .models import ProbeRun
from .services.runs import (
    PROBE_RUN_TASK,
    SOFT_TIME_LIMIT_S,
    TIME_LIMIT_S,
    probe_run_execute,
    probe_run_fail,
    probe_runs_fail_abandoned,
)

MAX_RETRIES = 3


@shared_task(
    name=PROBE_RUN_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
    time_limit=TIME_LIMIT_S,
    soft_time_limit=SOFT_TIME_LIMIT_S,
)
def probe_run_task(self: Task, probe_run_id: int) -> dict | None:
    try:
        run = probe_run_execute(probe_run_id=probe_run_id)
    except TRANSIENT_ERRORS as exc:
        # Retried only while nothing has been sent: a repeat must not spend the vendor's
        # tokens twice.
        nothing_sent = ProbeRun.objects.filter(
            pk=probe_run_id, first_request_at__isnull=True
        ).exists()
        if nothing_sent and self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc
        probe_run_fail(probe_run_id=probe_run_id, error=f"{type(exc).__name__}: {exc}")
        return None
    except SoftTimeLimitExceeded:
        probe_run_fail(probe_run_id=probe_run_id, error="the probe took longer than its time limit")
        return None
    except Exception as exc:  # anything else would fail the same way again: record it
        probe_run_fail(probe_run_id=probe_run_id, error=f"{type(exc).__name__}: {exc}")
        return None
    if run is None:
        return None
    return {"probe_run": run.pk, "status": run.status}


@shared_task(ignore_result=True, time_limit=120, soft_time_limit=100)
def fail_abandoned_probe_runs() -> int:
    """Run by Celery beat every minute: a probe never runs twice, so one whose worker died
    (left running past the hard time limit) is failed and its keys destroyed."""
    return probe_runs_fail_abandoned()
