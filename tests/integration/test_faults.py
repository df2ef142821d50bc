"""Broken parts with real processes: Redis stopped in the middle of fifty submissions, the
whole worker SIGKILLed during scoring and rendering, fifty submissions at once on SQLite.
Nothing may be answered with a 5xx, nothing lost, nothing done twice."""

from __future__ import annotations

import io
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import api_token_create
from assessments.models import (
    Assessment,
    AuditEvent,
    Channel,
    EvidenceFile,
    Finding,
    RunStatus,
    ScoringRun,
)
from assessments.services.answers import answers_save, assessment_create
from assessments.services.evidence import evidence_add
from assessments.services.vendor_links import vendor_link_issue
from assessments.services.vendors import vendor_create
from reports.models import Report, ReportStatus
from reports.services import report_file
from tests.personas import member_of

from .conftest import ARTIFACTS
from .steps import LAUNCH_LOG, QUESTIONNAIRE, launch_answers
from .worker import Worker, eventually, start_celery

SUBMISSIONS = 50
RECOVERY_AFTER_REDIS = 60  # seconds: every submission scored within this of Redis returning
RECOVERY_AFTER_RESTART = 120  # seconds: a killed worker's tasks done within this of restart


def answered_assessments(personas, count: int, prefix: str) -> list[int]:
    """`count` assessments of Acme with every answer, built through the services."""
    ids = []
    answers = launch_answers()
    for index in range(count):
        vendor = vendor_create(
            organization=personas.acme,
            actor=personas.ava,
            channel=Channel.API,
            name=f"{prefix} {index}",
        )
        assessment = assessment_create(
            organization=personas.acme,
            vendor=vendor,
            questionnaire_key=QUESTIONNAIRE,
            actor=personas.ava,
            channel=Channel.API,
        )
        answers_save(
            assessment=assessment, answers=answers, actor=personas.ava, channel=Channel.API
        )
        ids.append(assessment.pk)
    return ids


def runs_of(assessment_ids: list[int]) -> list[ScoringRun]:
    return list(ScoringRun.objects.filter(assessment_id__in=assessment_ids))


def assert_scored_exactly_once(assessment_ids: list[int]) -> None:
    runs = runs_of(assessment_ids)
    assert sorted(run.assessment_id for run in runs) == sorted(assessment_ids)
    assert {run.status for run in runs} == {RunStatus.SUCCEEDED}
    successes = AuditEvent.objects.filter(
        assessment_id__in=assessment_ids, action="scoring.succeeded"
    )
    assert sorted(successes.values_list("assessment_id", flat=True)) == sorted(assessment_ids)
    for run in runs:
        rules = list(Finding.objects.filter(run=run).values_list("rule_id", flat=True))
        assert rules and len(rules) == len(set(rules))


def audit_trail_intact() -> bool:
    out = io.StringIO()
    try:
        call_command("verify_audit", stdout=out)
    except SystemExit:
        return False
    return "BROKEN" not in out.getvalue()


# -- Redis -------------------------------------------------------------------------------------


@pytest.fixture
def beat(celery_worker_process: Worker, tmp_path: Path):
    """Celery beat, sending the sweeper every 2 s to the tests' worker."""
    log_path = ARTIFACTS / f"celery-beat-{celery_worker_process.queue}.log"
    process = start_celery(
        ["beat", "--loglevel", "INFO", "--schedule", str(tmp_path / "beat-schedule")],
        environment={**celery_worker_process.environment, "SWEEPER_INTERVAL": "2"},
        log_path=log_path,
    )
    yield process
    process.terminate()
    process.wait(timeout=15)


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_redis_outage_during_fifty_submissions_loses_nothing(
    api, worker, personas, redis_server, beat, redis_cache
):
    assessment_ids = answered_assessments(personas, SUBMISSIONS, "Outage")
    _link, token = vendor_link_issue(
        assessment=assessment_create(
            organization=personas.acme,
            vendor=vendor_create(
                organization=personas.acme, actor=personas.ava, channel=Channel.API, name="Link"
            ),
            questionnaire_key=QUESTIONNAIRE,
            actor=personas.ava,
            channel=Channel.API,
            answers=launch_answers(),
        ),
        contact_email="vendor@example.test",
        member=member_of(personas.ava),
        channel=Channel.API,
    )
    statuses = []
    for index, assessment_id in enumerate(assessment_ids):
        if index == 15:
            redis_server.stop()
            # Down: the portal still serves, the health check says what is wrong.
            assert Client().get(f"/v/{token}/").status_code == 200
            assert Client().get("/v/not-a-token/").status_code == 404
            health = Client().get("/healthz")
            assert health.status_code == 503
            assert health.json()["checks"]["redis"] == "failing"
            assert health.json()["checks"]["database"] == "ok"
        if index == 35:
            redis_server.start()
            back_at = time.monotonic()
        statuses.append(api.post(f"/api/v1/assessments/{assessment_id}/submit/").status_code)
    assert statuses == [202] * SUBMISSIONS

    def all_scored() -> bool:
        return all(run.status == RunStatus.SUCCEEDED for run in runs_of(assessment_ids))

    eventually(
        all_scored,
        timeout=RECOVERY_AFTER_REDIS - (time.monotonic() - back_at),
        what="all 50 submissions are scored",
        worker=worker,
        interval=0.5,
    )
    assert_scored_exactly_once(assessment_ids)
    assert audit_trail_intact()
    # The submissions made while Redis was down were published by the sweeper.
    assert "sweeper queued again" in worker.log_text()
    eventually(
        lambda: Client().get("/healthz").status_code == 200,
        timeout=30,
        what="/healthz is 200 again (worker heartbeat back in Redis)",
    )


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_fifty_submissions_at_once_on_sqlite_get_no_5xx(worker, personas):
    assessment_ids = answered_assessments(personas, SUBMISSIONS, "Burst")
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="burst")

    def submit(assessment_id: int) -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        try:
            return client.post(f"/api/v1/assessments/{assessment_id}/submit/").status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(submit, assessment_ids))
    assert statuses == [202] * SUBMISSIONS

    eventually(
        lambda: all(run.status == RunStatus.SUCCEEDED for run in runs_of(assessment_ids)),
        timeout=90,
        what="all 50 submissions are scored",
        worker=worker,
        interval=0.5,
    )
    assert_scored_exactly_once(assessment_ids)
    assert audit_trail_intact()


# -- a worker killed mid-task ------------------------------------------------------------------


def big_startup_log(path: Path) -> Path:
    """The launch log padded to about 45 MB with lines the parser must examine: reading two of
    them takes the worker seconds, long enough to be killed in the middle."""
    filler = (
        b"[2026-10-01 12:00:00] Request length is longer than the KV cache pool size: "
        b"max seq len check for a request of 2048 tokens\n"
    )
    with path.open("wb") as handle:
        handle.write(LAUNCH_LOG.read_bytes())
        handle.write(filler * (45 * 1024 * 1024 // len(filler)))
    return path


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_during_scoring_and_rendering_leaves_one_result_each(
    api, worker, killable_worker, personas, tmp_path
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    scored_id, slow_id = answered_assessments(personas, 2, f"Killed {uuid.uuid4().hex[:6]}")
    for index in range(2):
        log = big_startup_log(tmp_path / f"prefill-{index}.log")
        with log.open("rb") as handle:
            evidence_add(
                assessment=Assessment.objects.get(pk=slow_id),
                question_code="CTX-08",
                upload=SimpleUploadedFile(log.name, handle.read()),
                actor=personas.ava,
                channel=Channel.API,
            )
    # As rows stored before parses were kept: scoring reads the two big logs again, which
    # takes seconds (scoring from stored parses is too quick to be killed in the middle).
    EvidenceFile.objects.filter(assessment_id=slow_id).update(parse_result={})
    first = api.post(f"/api/v1/assessments/{scored_id}/submit/").json()["run"]
    eventually(
        lambda: ScoringRun.objects.get(pk=first).status == RunStatus.SUCCEEDED,
        timeout=60,
        what="the first assessment is scored",
        worker=killable_worker,
    )

    # Killed during a render (it takes seconds, outside any transaction), restarted ...
    requested = api.post(
        f"/api/v1/assessments/{scored_id}/reports/", {"language": "en"}, format="json"
    )
    assert requested.status_code == 202, requested.content
    report_id = requested.json()["id"]
    eventually(
        lambda: Report.objects.get(pk=report_id).status == ReportStatus.RENDERING,
        timeout=30,
        what="rendering has started",
        worker=killable_worker,
        interval=0.05,
    )
    killable_worker.kill()
    assert Report.objects.get(pk=report_id).status == ReportStatus.RENDERING
    killable_worker.restart()
    first_restart = time.monotonic()

    # ... and killed again during scoring (reading two big startup logs), restarted.
    run_id = api.post(f"/api/v1/assessments/{slow_id}/submit/").json()["run"]
    eventually(
        lambda: ScoringRun.objects.get(pk=run_id).status == RunStatus.RUNNING,
        timeout=30,
        what="scoring has started",
        worker=killable_worker,
        interval=0.05,
    )
    killable_worker.kill()
    killed_at = timezone.now()
    assert ScoringRun.objects.get(pk=run_id).status == RunStatus.RUNNING
    killable_worker.restart()

    # Nothing told the broker: it hands both messages out again after the visibility timeout.
    eventually(
        lambda: (
            ScoringRun.objects.get(pk=run_id).status == RunStatus.SUCCEEDED
            and Report.objects.get(pk=report_id).status == ReportStatus.READY
        ),
        timeout=RECOVERY_AFTER_RESTART - (time.monotonic() - first_restart),
        what="the killed render and scoring are done after the restarts",
        worker=killable_worker,
        interval=0.5,
    )
    assert time.monotonic() - first_restart < RECOVERY_AFTER_RESTART
    killable_worker.wait_until_idle()

    assert_scored_exactly_once([scored_id, slow_id])
    run = ScoringRun.objects.get(pk=run_id)
    # The killed attempt, and the one that finished after the restart.
    assert (run.attempts, run.finished_at > killed_at) == (2, True), (
        f"killed at {killed_at}, run {run.dispatched_at=} {run.finished_at=} {run.duration_ms=}"
    )
    report = Report.objects.get(pk=report_id)
    assert report.attempts == 2
    assert (
        AuditEvent.objects.filter(action="report.generated", detail__report=report.number).count()
        == 1
    )
    assert report_file(report=report).startswith(b"%PDF-")
    assert audit_trail_intact()
