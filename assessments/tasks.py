"""Celery tasks of the assessments app. A task takes ids and calls one service.

The scoring task lives beside the service it runs (`scoring_runs`), so that the scoring app
imports nothing of this one; its registered name stays the one it had in the scoring app, so
messages queued before an upgrade are still understood by the new workers.
"""

from __future__ import annotations

from celery import Task, shared_task

from core.tasks import TRANSIENT_ERRORS, run_or_record_failure

from .services.scoring_runs import scoring_run_execute, scoring_run_fail, scoring_runs_execute
from .services.submission import SCORE_RUN_TASK

# Both scoring tasks: acknowledged once done (a worker that dies leaves the message to another),
# retried on a passing database or file system error.
SCORING_TASK = {"bind": True, "acks_late": True, "reject_on_worker_lost": True, "max_retries": 3}


@shared_task(
    name=SCORE_RUN_TASK,
    **SCORING_TASK,
    default_retry_delay=5,
    time_limit=120,
    soft_time_limit=100,
)
def score_assessment_run(self: Task, run_id: int) -> dict | None:
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


@shared_task(
    name="scoring.tasks.score_assessment_runs", **SCORING_TASK, time_limit=300, soft_time_limit=280
)
def score_assessment_runs(self: Task, run_ids: list[int]) -> dict:
    """Several runs in one transaction (a chunk of a rescore batch). When the chunk cannot
    finish, each of its runs goes on in a task of its own, with its own retries: only a run
    that fails for good is recorded as failed, and a lock never fails the others."""
    try:
        runs = scoring_runs_execute(run_ids=run_ids)
    except TRANSIENT_ERRORS as exc:
        if self.request.retries < self.max_retries:
            raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc
    except Exception:  # noqa: S110 - whichever run failed is found one by one, below
        pass
    else:
        return {"runs": len(runs)}
    for run_id in run_ids:
        score_assessment_run.delay(run_id)
    return {"runs": len(run_ids), "one_by_one": True}
