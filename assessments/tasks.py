"""Celery tasks of the assessments app. A task takes ids and calls one service.

The scoring task lives beside the service it runs (`scoring_runs`), so that the scoring app
imports nothing of this one; its registered name stays the one it had in the scoring app, so
messages queued before an upgrade are still understood by the new workers.
"""

from __future__ import annotations

from celery import shared_task

from core.tasks import run_or_record_failure


@shared_task(
    name="scoring.tasks.score_assessment_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=3,
    default_retry_delay=5,
    time_limit=120,
    soft_time_limit=100,
)
def score_assessment_run(self, run_id: int) -> dict | None:  # noqa: ANN001
    from .scoring_runs import scoring_run_execute, scoring_run_fail

    run = run_or_record_failure(
        self,
        lambda: scoring_run_execute(run_id=run_id),
        lambda reason: scoring_run_fail(run_id=run_id, error=reason),
        too_slow="scoring took longer than the time limit",
    )
    if run is None:
        return None
    return {
        "run": run.pk,
        "status": run.status,
        "risk_score": run.risk_score,
        "risk_tier": run.risk_tier,
    }
