"""Submit, rescore and past runs. Scoring runs inline here (`inline_scoring`); the tests with a
real Redis and worker live elsewhere."""

import pytest

from assessments.models import Assessment, AuditEvent, Finding, ScoringRun
from core.queueing import publish

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def url(assessment, action):
    return f"/api/v1/assessments/{assessment.pk}/{action}/"


def test_submitting_queues_scoring_and_answers_202(personas, answered, client_as, inline_scoring):
    client = client_as(personas.ava)

    with inline_scoring():
        response = client.post(url(answered, "submit"))

    assert response.status_code == 202
    run = ScoringRun.objects.get()
    assert response.json() == {"status": "submitted", "run": run.pk}
    detail = client.get(f"/api/v1/assessments/{answered.pk}/").json()
    assert detail["status"] == "scored"
    assert detail["risk_tier"] == "critical"
    assert detail["scored_with"] == "incident-2026-kv@3"  # newest that scores v1 answers
    assert {f["rule"] for f in detail["findings"]} >= {"KV-POOL-BELOW-CONTEXT"}
    assert detail["submitted_at"] is not None
    event = AuditEvent.objects.get(action="assessment.submitted")
    assert (event.actor, event.channel) == (personas.ava, "api")


def test_a_submission_without_a_worker_stays_submitted_and_queued(
    personas, answered, client_as, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client_as(personas.ava).post(url(answered, "submit"))

    assert response.status_code == 202
    # The scoring task is sent when the transaction commits (the members' notification
    # emails leave then too).
    published = [callback for callback in callbacks if getattr(callback, "func", None) is publish]
    assert [callback.args[0] for callback in published] == ["scoring.tasks.score_assessment_run"]
    answered.refresh_from_db()
    assert answered.status == "submitted"
    assert ScoringRun.objects.get().status == "queued"


def test_submitting_with_missing_answers_lists_the_missing_codes(personas, assessment, client_as):
    client = client_as(personas.ava)
    client.patch(
        url(assessment, "answers"),
        {"answers": {"PRF-01": "Workers AI", "PRF-07": "no"}},
        format="json",
    )

    response = client.post(url(assessment, "submit"))

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {"PRF-02", "CTX-01", "USE-05"} <= set(errors)
    assert "PRF-01" not in errors
    assert "PRF-08" not in errors  # hidden: PRF-07 is "no"
    assert "PRF-09" not in errors  # optional
    assert errors["CTX-01"] == ["This question is required."]
    assessment.refresh_from_db()
    assert assessment.status == "draft"
    assert not ScoringRun.objects.exists()


def test_submitting_twice_is_a_conflict(personas, scored, client_as):
    response = client_as(personas.ava).post(url(scored, "submit"))

    assert response.status_code == 409
    assert list(response.json()["errors"]) == ["status"]
    assert ScoringRun.objects.count() == 1


def test_rescoring_keeps_the_earlier_run(personas, scored, client_as, inline_scoring):
    client = client_as(personas.ava)
    first_run = scored.latest_run

    with inline_scoring():
        response = client.post(url(scored, "rescore"))

    assert response.status_code == 202
    second_run = ScoringRun.objects.exclude(pk=first_run.pk).get()
    assert response.json() == {"status": "submitted", "run": second_run.pk}
    detail = client.get(f"/api/v1/assessments/{scored.pk}/").json()
    assert detail["status"] == "scored"
    assert [run["id"] for run in detail["runs"]] == [second_run.pk, first_run.pk]
    assert Finding.objects.filter(run=first_run).exists()


def test_a_draft_cannot_be_rescored(personas, assessment, client_as):
    response = client_as(personas.ava).post(url(assessment, "rescore"))
    assert response.status_code == 409
    assert not ScoringRun.objects.exists()


def test_a_past_run_stays_viewable_with_its_findings(personas, scored, client_as):
    run = scored.latest_run

    response = client_as(personas.vic).get(url(scored, f"runs/{run.pk}"))

    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["ruleset"], body["status"]) == (
        run.pk, "incident-2026-kv@3", "succeeded",
    )  # fmt: skip
    assert (body["score"], body["tier"]) == (run.risk_score, "critical")
    assert [f["rule"] for f in body["findings"]] == list(
        run.findings.values_list("rule_id", flat=True)
    )
    assert body["findings"][0]["title"]
    assert body["answers"]["CTX-01"] == 1048576
    assert "CTX" in body["sections"]


@pytest.mark.parametrize("role", ["rex", "vic"])
def test_only_editors_submit_and_rescore(personas, answered, client_as, role):
    client = client_as(getattr(personas, role))
    assert client.post(url(answered, "submit")).status_code == 403
    assert client.post(url(answered, "rescore")).status_code == 403
    assert Assessment.objects.get().status == "draft"


def test_scoring_reads_the_parse_stored_at_upload_not_the_file_again(
    personas, answered, client_as, inline_scoring
):
    """One opinion per file: what the upload's parse said is what the score uses (the file is
    gone from storage here, and the run still cites the log line read at upload)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from assessments.models import EvidenceFile
    from assessments.storage import evidence_storage
    from tests.api.conftest import LOGS

    client = client_as(personas.ava)
    log = LOGS / "sglang-prefill-glm53-launch.log"
    upload = SimpleUploadedFile(log.name, log.read_bytes(), content_type="text/plain")
    assert (
        client.post(url(answered, "evidence"), {"question": "CTX-08", "file": upload}).status_code
        == 201
    )
    stored = EvidenceFile.objects.get()
    evidence_storage().delete(stored.storage_name)

    with inline_scoring():
        assert client.post(url(answered, "submit")).status_code == 202

    run = ScoringRun.objects.get()
    assert run.status == "succeeded"
    finding = Finding.objects.get(run=run, rule_id="LOG-POOL-BELOW-CONTEXT")
    log_items = [item for item in finding.evidence if item["kind"] == "log"]
    assert log_items and log_items[0]["file"] == log.name
    assert log_items[0]["line"] == stored.parse_result["pool_line"]
    assert log_items[0]["values"]["pool"] == stored.parse_result["pool"]
