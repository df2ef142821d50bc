"""Rescoring makes a new run; every past run, with its own findings, stays viewable."""

import pytest

from assessments.models import Assessment, Finding

from .steps import (
    RULESET,
    answered_assessment,
    queue_scoring,
    run_detail,
    wait_for_run,
)


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_rescoring_keeps_every_past_run_viewable(api, worker):
    assessment_id = answered_assessment(api)["assessment"]
    first_run = queue_scoring(api, assessment_id)
    wait_for_run(api, worker, assessment_id, first_run, run_status="succeeded")
    first_run_before = run_detail(api, assessment_id, first_run)
    first_finding_ids = set(Finding.objects.filter(run_id=first_run).values_list("id", flat=True))

    second_run = queue_scoring(api, assessment_id, "rescore")
    detail = wait_for_run(api, worker, assessment_id, second_run, run_status="succeeded")

    assert second_run != first_run
    assert detail["status"] == "scored"
    assert [(r["id"], r["status"], r["ruleset"]) for r in detail["runs"]] == [
        (second_run, "succeeded", RULESET),
        (first_run, "succeeded", RULESET),
    ]
    # The earlier run is exactly as it was, with its own finding rows.
    assert run_detail(api, assessment_id, first_run) == first_run_before
    assert set(Finding.objects.filter(run_id=first_run).values_list("id", flat=True)) == (
        first_finding_ids
    )
    newest = run_detail(api, assessment_id, second_run)
    assert newest["findings"] and newest["findings"] == first_run_before["findings"]
    assert not first_finding_ids & set(
        Finding.objects.filter(run_id=second_run).values_list("id", flat=True)
    )
    # The assessment shows the newest run.
    assert Assessment.objects.get(pk=assessment_id).latest_run_id == second_run
    assert detail["findings"] == newest["findings"]
    assert (detail["risk_score"], detail["risk_tier"]) == (newest["score"], newest["tier"])
