"""Celery tasks of the reports app. A task takes ids and calls one service."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from scoring.tasks import TRANSIENT_ERRORS

MAX_RETRIES = 3


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
    time_limit=180,
    soft_time_limit=150,
)
def render_report_task(self, report_id: int) -> dict | None:  # noqa: ANN001
    from .services import report_fail, report_render

    try:
        report = report_render(report_id=report_id)
    except TRANSIENT_ERRORS as exc:
        if self.request.retries < self.max_retries:
            # 2, 4, 8 s: a database or shared-disk hiccup usually passes within seconds.
            raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc
        report_fail(report_id=report_id, error=f"{type(exc).__name__}: {exc}")
        return None
    except SoftTimeLimitExceeded:
        report_fail(report_id=report_id, error="rendering took longer than the time limit")
        return None
    except Exception as exc:  # anything else would fail the same way again: record it
        report_fail(report_id=report_id, error=f"{type(exc).__name__}: {exc}")
        return None
    if report is None:
        return None
    return {"report": report.pk, "number": report.number, "status": report.status}
