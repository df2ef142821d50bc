"""A scoring message delivered more than once (acks_late: a worker lost before its ack, a
broker that redelivers) never duplicates findings."""

import pytest

from assessments.models import AuditEvent, Finding, ScoringRun
from assessments.services import submission as submission_services

from .steps import answered_assessment, assessment_detail, queue_scoring, run_detail, wait_for_run


def finding_rows(run_id):
    return list(Finding.objects.filter(run_id=run_id).order_by("id").values())


def successes_recorded(assessment_id):
    return AuditEvent.objects.filter(
        assessment_id=assessment_id, action="scoring.succeeded"
    ).count()


def deliveries_logged(worker, run_id):
    """Tasks the worker ran for this run (each logs its result, which names the run)."""
    return sum(
        1
        for line in worker.log_text().splitlines()
        if "score_assessment_run[" in line
        and " succeeded in " in line
        and f"'run': {run_id}," in line
    )


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_redelivered_task_does_not_duplicate_findings(api, worker):
    assessment_id = answered_assessment(api)["assessment"]
    run_id = queue_scoring(api, assessment_id)
    detail = wait_for_run(api, worker, assessment_id, run_id, run_status="succeeded")
    findings = finding_rows(run_id)
    run = ScoringRun.objects.get(pk=run_id)
    assert findings

    worker.wait_for_tasks(worker.send(run_id), worker.send(run_id))

    assert finding_rows(run_id) == findings
    rescored = ScoringRun.objects.get(pk=run_id)
    assert (rescored.status, rescored.attempts, rescored.finished_at, rescored.risk_score) == (
        run.status,
        run.attempts,
        run.finished_at,
        run.risk_score,
    )
    assert ScoringRun.objects.filter(assessment_id=assessment_id).count() == 1
    assert successes_recorded(assessment_id) == 1
    assert assessment_detail(api, assessment_id) == detail
    assert deliveries_logged(worker, run_id) == 3


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_run_delivered_twice_before_it_finished_is_scored_once(api, worker, monkeypatch):
    assessment_id = answered_assessment(api)["assessment"]
    with monkeypatch.context() as patched:
        # The submission's own message is lost: the run stays queued until we deliver it.
        patched.setattr(submission_services, "publish_on_commit", lambda *args, **kwargs: None)
        run_id = queue_scoring(api, assessment_id)
    assert run_detail(api, assessment_id, run_id)["status"] == "queued"

    first, second = worker.send(run_id), worker.send(run_id)
    worker.wait_for_tasks(first, second)

    detail = wait_for_run(api, worker, assessment_id, run_id, run_status="succeeded")
    assert detail["status"] == "scored"
    rules = list(Finding.objects.filter(run_id=run_id).values_list("rule_id", flat=True))
    assert rules and len(rules) == len(set(rules))
    assert sorted(rules) == sorted(finding["rule"] for finding in detail["findings"])
    assert ScoringRun.objects.get(pk=run_id).attempts == 1
    assert successes_recorded(assessment_id) == 1
    assert deliveries_logged(worker, run_id) == 2
