"""Celery tasks of the reports app. A task takes ids and calls one service."""

from __future__ import annotations

from collections.abc import Callable

from celery import Task, shared_task

from core.tasks import run_or_record_failure

from .models import GeneratedDocument
from .services import (
    PORTFOLIO_RENDER_TASK,
    RENDER_TASK,
    portfolio_report_fail,
    portfolio_report_render,
    report_fail,
    report_render,
)

MAX_RETRIES = 3


# Both renderings: late acknowledgement (a worker killed mid-render hands the task back), the
# same retries and time limits (the sweeper reads `time_limit`).
RENDERING = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "max_retries": MAX_RETRIES,
    "time_limit": 180,
    "soft_time_limit": 150,
}


def _rendered(
    task: Task, render: Callable[[], GeneratedDocument | None], fail: Callable[[str], None]
) -> dict | None:
    report = run_or_record_failure(
        task, render, fail, too_slow="rendering took longer than the time limit"
    )
    if report is None:
        return None
    return {"report": report.pk, "number": report.number, "status": report.status}


@shared_task(name=RENDER_TASK, **RENDERING)
def render_report_task(self: Task, report_id: int) -> dict | None:
    return _rendered(
        self,
        lambda: report_render(report_id=report_id),
        lambda reason: report_fail(report_id=report_id, error=reason),
    )


@shared_task(name=PORTFOLIO_RENDER_TASK, **RENDERING)
def render_portfolio_report_task(self: Task, report_id: int) -> dict | None:
    return _rendered(
        self,
        lambda: portfolio_report_render(report_id=report_id),
        lambda reason: portfolio_report_fail(report_id=report_id, error=reason),
    )
