"""A rescore batch survives its worker being killed in the middle: after a restart (and the
sweeper's resume, as Celery beat runs it) the batch finishes with every assessment rescored
exactly once, and a chunk delivered again changes nothing."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from assessments.models import Assessment, ScoringRun
from portfolio.models import BatchStatus, ItemState, RescoreBatch, RescoreItem
from portfolio.services import rescore_batches_resume
from portfolio.tasks import rescore_chunk
from tests.portfolio.conftest import V1, V2, expected, outdated_assessments

from .worker import eventually

ASSESSMENTS = 40


def finished(batch_id: int) -> int:
    return RescoreItem.objects.filter(
        batch_id=batch_id, state__in=[ItemState.DONE, ItemState.FAILED]
    ).count()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_batch_finishes_after_its_worker_is_killed_with_each_assessment_rescored_once(
    api, worker, killable_worker, personas, settings, monkeypatch
):
    # Many chunks (a chunk is scored in one commit): the worker dies with some done, some not.
    # The worker fans the batch out, so it runs with the size too.
    settings.RESCORE_CHUNK_SIZE = 2
    killable_worker.stop()
    killable_worker.environment["RESCORE_CHUNK_SIZE"] = "2"
    killable_worker.restart()
    with monkeypatch.context() as patched:
        # Last year's results, scored here with v1 (their own scoring messages are not sent).
        patched.setattr("assessments.services.submission.publish_on_commit", lambda *args: None)
        assessments = outdated_assessments(personas, ASSESSMENTS)

    response = api.post("/api/v1/rescore-batches/", {"ruleset": V2}, format="json")
    assert response.status_code == 202
    batch_id = response.json()["id"]

    eventually(
        lambda: finished(batch_id) >= 4,
        timeout=60,
        interval=0.02,
        what="the worker has rescored a few assessments",
        worker=killable_worker,
    )
    killable_worker.kill()
    done_when_killed = finished(batch_id)
    assert 0 < done_when_killed < ASSESSMENTS, "the worker was not killed mid-batch"
    assert RescoreBatch.objects.get(pk=batch_id).status == BatchStatus.RUNNING

    killable_worker.restart()

    def resumed() -> bool:
        """Celery beat runs the resume every minute; here the batch has not moved "for long
        enough". The restarted worker goes on with the chunks still queued and moves the batch
        meanwhile, and a resume claims a batch only if no one moved it since it looked: try
        again until one claims it. (Were the worker killed between two chunks, nothing would be
        lost and the batch would simply finish.)"""
        later = timezone.now() + dt.timedelta(seconds=settings.RESCORE_STALL_SECONDS + 1)
        if rescore_batches_resume(now=later) == 1:
            return True
        return RescoreBatch.objects.filter(pk=batch_id, status=BatchStatus.DONE).exists()

    eventually(resumed, timeout=60, interval=0.2, what="a resume claims the batch")
    batch = eventually(
        lambda: RescoreBatch.objects.filter(pk=batch_id, status=BatchStatus.DONE).first(),
        timeout=120,
        what="the batch is done",
        worker=killable_worker,
    )
    assert batch.finished_at is not None

    # A chunk delivered once more (the killed worker's message, handed out again) changes nothing.
    item_ids = list(RescoreItem.objects.filter(batch_id=batch_id).values_list("pk", flat=True))
    rescore_chunk.apply_async(args=[batch_id, item_ids[:4]])
    killable_worker.wait_until_idle(timeout=60)

    body = api.get(f"/api/v1/rescore-batches/{batch_id}/").json()
    assert (body["status"], body["total"], body["done"], body["failed"]) == (
        "done",
        ASSESSMENTS,
        ASSESSMENTS,
        0,
    )
    for assessment in assessments:
        runs = list(ScoringRun.objects.filter(assessment=assessment).order_by("pk"))
        assert [run.ruleset.key for run in runs] == [V1, V2], assessment.vendor.name
        fresh = Assessment.objects.get(pk=assessment.pk)
        assert fresh.latest_run_id == runs[-1].pk
        want = expected(fresh, V2)
        assert (fresh.risk_score, fresh.risk_tier) == (want["risk_score"], want["risk_tier"])
        assert sorted(fresh.latest_run.findings.values_list("rule_id", flat=True)) == want["rules"]
