"""Submit through the REST API; a real Celery worker scores over Redis; the result appears."""

import pytest

from .steps import (
    LAUNCH_LOG,
    LOG_QUESTION,
    RULESET,
    answered_assessment,
    expected_score,
    queue_scoring,
    run_detail,
    wait_for_run,
)


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_the_worker_scores_an_assessment_submitted_through_the_api(api, worker):
    evidence = answered_assessment(api)
    assessment_id = evidence["assessment"]
    assert evidence["question"] == LOG_QUESTION and evidence["name"] == LAUNCH_LOG.name

    run_id = queue_scoring(api, assessment_id)
    detail = wait_for_run(api, worker, assessment_id, run_id, run_status="succeeded")

    assert detail["status"] == "scored"
    assert detail["risk_tier"] == "critical"
    assert detail["scored_with"] == RULESET
    rules = [finding["rule"] for finding in detail["findings"]]
    assert {"KV-POOL-BELOW-CONTEXT", "SGLANG-DISAGG-REJECTION", "LOG-POOL-BELOW-CONTEXT"} <= set(
        rules
    )
    assert len(rules) == len(set(rules))
    assert detail["risk_score"] == expected_score(detail["findings"])
    assert [run["id"] for run in detail["runs"]] == [run_id]
    run = run_detail(api, assessment_id, run_id)
    assert (run["score"], run["tier"], run["ruleset"]) == (
        detail["risk_score"],
        "critical",
        RULESET,
    )
    assert run["findings"] == detail["findings"]
    # the worker read the uploaded log from the shared MEDIA_ROOT
    assert run["evidence"][LOG_QUESTION]["parsed"] is True
    assert run["evidence"][LOG_QUESTION]["pool"] == 681_280
