"""A vendor's submission, scored by a real Celery worker over Redis, reaches a receiver on a
loopback port as two signed deliveries; the receiver's 500 is retried by the worker."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from config.celery import app as celery_app
from webhooks.models import DeliveryStatus, WebhookDelivery
from webhooks.services import endpoint_create
from webhooks.signing import signature_verify

from ..webhooks.receiver import start_receiver
from .steps import answered_assessment, queue_scoring, wait_for_run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def wait_for(condition, *, timeout: float = 30.0, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.1)


def test_the_worker_delivers_signed_events_and_retries_a_receiver_error(
    api, worker, personas, settings
):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    receiver, server = start_receiver()
    receiver.answers = [500]  # the first delivery fails
    try:
        _endpoint, secret = endpoint_create(
            organization=personas.acme,
            actor=personas.alice,
            url=receiver.url,
            events=["assessment.submitted", "assessment.scored"],
        )
        assessment_id = answered_assessment(api)["assessment"]
        run_id = queue_scoring(api, assessment_id)
        wait_for_run(api, worker, assessment_id, run_id, run_status="succeeded")
        wait_for(lambda: len(receiver.requests) >= 2, what="both events' first attempts")
        assert WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING).count() == 1

        time.sleep(1.1)  # WEBHOOK_RETRY_SECONDS in the worker
        celery_app.send_task(
            "webhooks.tasks.retry_due_webhooks", queue=worker.queue
        )  # what beat sends every minute
        wait_for(
            lambda: not WebhookDelivery.objects.exclude(status=DeliveryStatus.DELIVERED).exists(),
            what="the retry",
        )
    finally:
        server.shutdown()
        server.server_close()

    assert len(receiver.requests) == 3
    now = int(timezone.now().timestamp())
    for request in receiver.requests:
        signature_verify(
            header=request.headers["AVIA-Signature"], secret=secret, body=request.body, now=now
        )
    events = sorted(request.headers["AVIA-Event"] for request in receiver.requests)
    assert events.count("assessment.submitted") + events.count("assessment.scored") == 3
    assert set(WebhookDelivery.objects.values_list("event", flat=True)) == {
        "assessment.submitted",
        "assessment.scored",
    }
