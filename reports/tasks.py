"""Celery tasks of the reports app. A task takes ids and calls one service."""

from __future__ import annotations

from celery import Task, shared_task

from core.tasks import run_or_record_failure

from .services import RENDER_TASK, report_fail, report_render

MAX_RETRIES = 3


@shared_task(
    name=RENDER_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
    time_limit=180,
    soft_time_limit=150,
)
def render_report_task(self: Task, report_id: int) -> dict | None:
    report = run_or_record_failure(
        self,
        lambda: report_render(report_id=report_id),
        lambda reason: report_fail(report_id=report_id, error=reason),
        too_slow="rendering took longer than the time limit",
    )
    if report is None:
        return None
    return {"report": report.pk, "number": report.number, "status": report.status}
