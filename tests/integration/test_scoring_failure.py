"""Scoring that cannot finish: retried by the worker, then recorded as failed, answers kept."""

from pathlib import Path

import pytest

from assessments.models import EvidenceFile
from assessments.storage import evidence_storage

from .steps import (
    answered_assessment,
    launch_answers,
    queue_scoring,
    run_detail,
    wait_for_run,
)

# The task retries a file system error three times, 2 + 4 + 8 seconds apart.
RETRIES = 3
FAILURE_TIMEOUT = 45


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_run_that_cannot_finish_leaves_scoring_failed_and_keeps_the_answers(api, worker):
    evidence = answered_assessment(api)
    assessment_id = evidence["assessment"]
    stored = Path(evidence_storage().path(EvidenceFile.objects.get(pk=evidence["id"]).storage_name))
    log_bytes = stored.read_bytes()
    # The evidence row stays, its file is gone and its stored parse with it (as for a row kept
    # from before parses were stored): scoring must read the file, and every attempt raises.
    stored.unlink()
    EvidenceFile.objects.filter(pk=evidence["id"]).update(parse_result={})
    log_before = len(worker.log_text())

    failed_run = queue_scoring(api, assessment_id)
    detail = wait_for_run(
        api, worker, assessment_id, failed_run, run_status="failed", timeout=FAILURE_TIMEOUT
    )

    assert detail["status"] == "scoring_failed"
    assert detail["answers"] == launch_answers()
    assert [e["id"] for e in detail["evidence"]] == [evidence["id"]]
    assert detail["findings"] == [] and detail["risk_score"] is None
    run = run_detail(api, assessment_id, failed_run)
    assert run["status"] == "failed" and run["findings"] == []
    assert run["error"].startswith("FileNotFoundError")
    retries = [
        line for line in worker.log_text()[log_before:].splitlines() if "retry: Retry in" in line
    ]
    assert len(retries) == RETRIES, worker.log_tail()

    # The cause is fixed; scoring again succeeds and the failed run stays on record.
    stored.write_bytes(log_bytes)
    second_run = queue_scoring(api, assessment_id, "rescore")
    detail = wait_for_run(api, worker, assessment_id, second_run, run_status="succeeded")

    assert detail["status"] == "scored" and detail["risk_tier"] == "critical"
    assert detail["answers"] == launch_answers()
    assert [(r["id"], r["status"]) for r in detail["runs"]] == [
        (second_run, "succeeded"),
        (failed_run, "failed"),
    ]
    assert run_detail(api, assessment_id, failed_run) == run
