"""Broken parts, in one process: a cache or broker that is down, a database that stays locked.
(The same with real Redis and worker processes is in tests/integration/test_faults.py.)"""

import datetime as dt
import json
import logging

import pytest
from django.db import OperationalError
from django.test import Client, RequestFactory
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from assessments.models import Channel, RunStatus, ScoringRun, TokenFailureCount
from assessments.services.scoring_runs import MAX_SCORING_ATTEMPTS
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_issue
from assessments.tasks import score_assessment_run
from config.middleware import DatabaseBusyMiddleware
from reports.sweeper import requeue_stuck
from tests.personas import member_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def cache_down(dead_cache, settings):
    settings.PORTAL_TOKEN_FAILURE_LIMIT = 3


@pytest.fixture
def token(answered, personas):
    _link, token = vendor_link_issue(
        assessment=answered,
        contact_email="vendor@inferno.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    return token


def test_the_portal_serves_with_the_cache_down(cache_down, token):
    client = Client()
    assert client.get(f"/v/{token}/").status_code == 200
    for _ in range(3):
        assert client.get("/v/not-a-token/").status_code == 404
    assert TokenFailureCount.objects.get(address="127.0.0.1").count == 3
    # Over the limit: guesses are refused, the vendor's own link still opens.
    assert client.get("/v/another-guess/").status_code == 429
    assert client.get(f"/v/{token}/").status_code == 200
    assert Client(REMOTE_ADDR="198.51.100.7").get("/v/not-a-token/").status_code == 404


def test_the_database_count_starts_again_after_the_window(cache_down, token, settings):
    for _ in range(3):
        Client().get("/v/not-a-token/")
    TokenFailureCount.objects.update(window_started_at=timezone.now() - dt.timedelta(hours=1))
    assert Client().get("/v/not-a-token/").status_code == 404
    assert TokenFailureCount.objects.get().count == 1


def test_sign_in_works_with_the_cache_down(cache_down, personas):
    from tests.personas import PASSWORD

    response = Client().post(
        "/accounts/login/", {"username": "ava@acme.test", "password": PASSWORD}
    )
    assert response.status_code == 302


def test_a_submission_survives_a_broker_that_is_down(
    answered, personas, settings, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def broker_down(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    with monkeypatch.context() as patched, caplog.at_level(logging.WARNING):
        patched.setattr(score_assessment_run, "apply_async", broker_down)
        with django_capture_on_commit_callbacks(execute=True):
            run = assessment_submit(assessment=answered, actor=personas.ava, channel=Channel.WEB)
    assert "the sweeper will queue it again" in caplog.text
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    # Not yet stuck: the sweeper leaves it alone.
    assert requeue_stuck() == {"scoring runs": 0, "reports": 0, "portfolio reports": 0}
    later = timezone.now() + dt.timedelta(seconds=settings.SWEEPER_QUEUED_AFTER + 1)
    assert requeue_stuck(now=later) == {"scoring runs": 1, "reports": 0, "portfolio reports": 0}
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.SUCCEEDED, 1)
    # Idempotent: nothing is stuck any more.
    assert requeue_stuck(now=later + dt.timedelta(hours=1)) == {
        "scoring runs": 0,
        "reports": 0,
        "portfolio reports": 0,
    }


@pytest.fixture
def left_running(answered, personas, settings, monkeypatch, django_capture_on_commit_callbacks):
    """`left_running(attempts)`: submitted, its message lost, then `running` since now (a worker
    took it and died) after `attempts` attempts. Returns the run and when it started."""
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def make(attempts: int = 1) -> tuple[ScoringRun, dt.datetime]:
        with monkeypatch.context() as patched:
            patched.setattr(score_assessment_run, "apply_async", lambda *args, **kwargs: None)
            with django_capture_on_commit_callbacks(execute=True):
                run = assessment_submit(
                    assessment=answered, actor=personas.ava, channel=Channel.WEB
                )
        started = timezone.now()
        ScoringRun.objects.filter(pk=run.pk).update(
            status=RunStatus.RUNNING, dispatched_at=started, attempts=attempts
        )
        return run, started

    return make


def test_the_sweeper_requeues_a_run_left_running_by_a_dead_worker(left_running):
    run, started = left_running()
    within_limit = started + dt.timedelta(seconds=score_assessment_run.time_limit)
    assert requeue_stuck(now=within_limit) == {
        "scoring runs": 0,
        "reports": 0,
        "portfolio reports": 0,
    }
    past_limit = within_limit + dt.timedelta(seconds=60)
    assert requeue_stuck(now=past_limit) == {
        "scoring runs": 1,
        "reports": 0,
        "portfolio reports": 0,
    }
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED


def test_a_run_that_keeps_killing_its_worker_fails_instead_of_cycling(answered, left_running):
    # Its worker died mid-way time after time: `running`, every attempt counted.
    run, started = left_running(attempts=MAX_SCORING_ATTEMPTS)
    past_limit = started + dt.timedelta(seconds=score_assessment_run.time_limit + 60)
    assert requeue_stuck(now=past_limit) == {
        "scoring runs": 1,
        "reports": 0,
        "portfolio reports": 0,
    }

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert f"interrupted {MAX_SCORING_ATTEMPTS} times" in run.error
    answered.refresh_from_db()
    assert answered.status == "scoring_failed"
    assert answered.audit_events.filter(action="scoring.failed").exists()
    # Failed for good: the sweeper has nothing left to queue.
    later = past_limit + dt.timedelta(hours=1)
    assert requeue_stuck(now=later) == {"scoring runs": 0, "reports": 0, "portfolio reports": 0}


def test_a_database_that_stays_locked_answers_503_not_500():
    request = RequestFactory().post("/api/v1/vendors/")
    middleware = DatabaseBusyMiddleware(lambda request: None)
    response = middleware.process_exception(request, OperationalError("database is locked"))
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "nothing was saved" in json.loads(response.content)["errors"]["server"][0]
    assert middleware.process_exception(request, OperationalError("no such table")) is None
