"""A probe's message handed out again while its worker is still probing.

The probe task is acknowledged late, and the Redis broker hands an unacknowledged message out
again after CELERY_VISIBILITY_TIMEOUT (60 s) whether or not its worker is alive; a probe runs
for up to PROBE_TIMEOUT_S (900 s). So a probe that runs longer than a minute gets a second
delivery while the first is still sending requests. That delivery must leave the run to the
worker that is on it — not fail it and destroy its keys while the first worker goes on spending
the vendor's tokens, only to have its result thrown away. A run whose worker really died
(running past the task's hard time limit, which no live worker outlasts) is failed, once."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.utils import timezone

from assessments.models import Channel
from probes.models import ProbeRun, ProbeRunStatus, ProbeSetup
from probes.services.runs import (
    TIME_LIMIT_S,
    probe_run_execute,
    probe_run_request,
    probe_runs_fail_abandoned,
)

from .vendor import reference_vendor

pytestmark = pytest.mark.django_db


def probing_since(run, seconds: float, *, sent: int = 12) -> None:
    """The state a worker leaves while it probes: running, started `seconds` ago, requests out
    (what `probe_run_execute` and its progress recorder write)."""
    started = timezone.now() - dt.timedelta(seconds=seconds)
    ProbeRun.objects.filter(pk=run.pk).update(
        status=ProbeRunStatus.RUNNING,
        started_at=started,
        first_request_at=started,
        attempts=1,
        requests_sent=sent,
    )


def test_a_second_delivery_a_minute_into_the_probe_leaves_it_to_its_worker(
    tmp_path, assessment, set_up_probe, personas
):
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] < settings.PROBE_TIMEOUT_S
    with reference_vendor(tmp_path, "launch-day") as vendor:
        set_up_probe(assessment, base_url=vendor.base_url)
        run = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)
        visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
        probing_since(run, visibility + 5)

        probe_run_execute(probe_run_id=run.pk)  # the message, handed out again
        received = vendor.requests()

    run.refresh_from_db()
    assert (run.status, run.error) == (ProbeRunStatus.RUNNING, "")
    assert ProbeSetup.objects.get().keys_present  # the first worker still needs them
    assert received == []  # and the second delivery sent nothing


def test_a_run_whose_worker_died_is_failed_once_past_the_time_limit(
    assessment, set_up_probe, personas
):
    set_up_probe(assessment)
    run = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)
    probing_since(run, 30)
    assert probe_runs_fail_abandoned() == 0
    run.refresh_from_db()
    assert run.status == ProbeRunStatus.RUNNING  # its worker may be probing

    probing_since(run, TIME_LIMIT_S + 60)
    assert probe_runs_fail_abandoned() == 1  # Celery beat, every minute

    run.refresh_from_db()
    assert run.status == ProbeRunStatus.FAILED and "not repeated" in run.error
    assert not ProbeSetup.objects.get().keys_present


def test_celery_beat_fails_abandoned_runs_every_minute():
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "probes.tasks.fail_abandoned_probe_runs" in tasks
