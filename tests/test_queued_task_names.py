"""Services queue Celery tasks by name (`core.queueing`), so that a service never imports the
task that calls it: every name a service queues is the name of the task in its tasks module."""

from __future__ import annotations

from typing import Any

import pytest

import assessments.services.submission
import assessments.tasks
import portfolio.services
import portfolio.tasks
import probes.services.runs
import probes.tasks
import reports.services
import reports.tasks
from core.queueing import task_named


@pytest.mark.parametrize(
    ("name", "task"),
    [
        (assessments.services.submission.SCORE_RUN_TASK, assessments.tasks.score_assessment_run),
        (probes.services.runs.PROBE_RUN_TASK, probes.tasks.probe_run_task),
        (reports.services.RENDER_TASK, reports.tasks.render_report_task),
        (reports.services.PORTFOLIO_RENDER_TASK, reports.tasks.render_portfolio_report_task),
        (portfolio.services.FAN_OUT_TASK, portfolio.tasks.rescore_batch_fan_out),
        (portfolio.services.CHUNK_TASK, portfolio.tasks.rescore_chunk),
    ],
)
def test_a_name_a_service_queues_is_its_task(name: str, task: Any) -> None:
    # `shared_task` gives a proxy of the app's task object
    assert task_named(name) is task._get_current_object()


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(KeyError):
        task_named("assessments.tasks.no_such_task")
