"""Deliveries to a real receiver on a loopback port: signed, retried after a failure with a
growing delay, never following a redirect, waiting while the receiver is down, and refused
for addresses inside the network unless the operator allows them."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone

from core.encryption import secret_decrypt
from webhooks import schema
from webhooks.events import WebhookEvent
from webhooks.models import DeliveryStatus, WebhookDelivery
from webhooks.services import (
    deliveries_retry_due,
    delivery_attempt,
    endpoint_create,
    endpoint_test_send,
    webhook_emit,
)
from webhooks.signing import SignatureInvalid, signature_verify

pytestmark = pytest.mark.django_db


def emit(personas, event=WebhookEvent.ASSESSMENT_SUBMITTED, key="submitted:run:1"):
    data = {"message": "hello"} if event == WebhookEvent.TEST else {"rescore_batch": {"id": 1}}
    return webhook_emit(organization=personas.acme, event=event, event_key=key, data=data)


def only_delivery() -> WebhookDelivery:
    (delivery,) = WebhookDelivery.objects.all()
    return delivery


def test_a_delivery_is_signed_with_the_endpoints_secret(personas, endpoint, receiver):
    found, secret = endpoint
    assert secret.startswith("whsec_") and secret not in found.secret_encrypted
    assert secret_decrypt(found.secret_encrypted) == secret
    endpoint_test_send(endpoint=found)
    delivery = only_delivery()

    assert delivery_attempt(delivery_id=delivery.pk) == DeliveryStatus.DELIVERED

    (request,) = receiver.requests
    sent_at = signature_verify(
        header=request.headers["AVIA-Signature"],
        secret=secret,
        body=request.body,
        now=int(timezone.now().timestamp()),
    )
    with pytest.raises(SignatureInvalid):
        signature_verify(
            header=request.headers["AVIA-Signature"],
            secret="whsec_not-it",
            body=request.body,
            now=sent_at,
        )
    payload = json.loads(request.body)
    assert request.headers["AVIA-Event"] == "webhook.test" == payload["event"]
    assert request.headers["AVIA-Delivery"] == str(delivery.pk) == str(payload["id"])
    assert payload["organization"] == {"id": personas.acme.pk, "name": personas.acme.name}
    # What was sent is what the OpenAPI schema documents.
    documented = schema.PAYLOADS[payload["event"]](data=payload)
    assert documented.is_valid(), documented.errors
    delivery.refresh_from_db()
    assert delivery.response_status == 200 and delivery.response_excerpt == "receiver says 200"


def test_a_receiver_that_fails_gets_the_delivery_again_later(
    personas, endpoint, receiver, settings
):
    settings.WEBHOOK_RETRY_SECONDS = 60
    receiver.answers = [500, 503]
    emit(personas)
    delivery = only_delivery()
    first = timezone.now()

    assert delivery_attempt(delivery_id=delivery.pk, now=first) == DeliveryStatus.PENDING
    delivery.refresh_from_db()
    assert delivery.response_status == 500 and delivery.last_error == "HTTP 500"
    assert delivery.next_attempt_at == first + dt.timedelta(seconds=60)
    # Not due yet: nothing is sent.
    assert deliveries_retry_due(now=first + dt.timedelta(seconds=59)) == 0
    assert deliveries_retry_due(now=first + dt.timedelta(seconds=60)) == 0  # 503 this time
    delivery.refresh_from_db()
    assert delivery.attempts == 2 and delivery.next_attempt_at == first + dt.timedelta(seconds=180)
    assert deliveries_retry_due(now=first + dt.timedelta(seconds=180)) == 1

    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 3
    assert len(receiver.requests) == 3
    assert len({request.headers["AVIA-Signature"] for request in receiver.requests}) == 3


def test_a_redirect_is_not_followed(personas, endpoint, receiver):
    receiver.answers = [302]
    emit(personas)

    assert delivery_attempt(delivery_id=only_delivery().pk) == DeliveryStatus.PENDING
    assert [request.path for request in receiver.requests] == ["/hooks/avia"]
    assert "redirected" in only_delivery().last_error


def test_a_receiver_that_is_down_leaves_the_delivery_waiting_then_failed(
    personas, endpoint, receiver, settings
):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    found, _secret = endpoint
    found.url = "http://127.0.0.1:9/hooks"  # the discard port: nothing listens
    found.save()
    emit(personas)
    now = timezone.now()

    assert delivery_attempt(delivery_id=only_delivery().pk, now=now) == DeliveryStatus.PENDING
    assert "127.0.0.1:9" in only_delivery().last_error
    later = only_delivery().next_attempt_at
    assert delivery_attempt(delivery_id=only_delivery().pk, now=later) == DeliveryStatus.FAILED
    assert only_delivery().next_attempt_at is None


def test_an_event_is_delivered_once_per_endpoint_and_only_to_its_subscribers(
    personas, endpoint, receiver
):
    narrow, _secret = endpoint_create(
        organization=personas.acme,
        actor=personas.alice,
        url=receiver.url,
        events=[WebhookEvent.REPORT_READY],
    )
    other, _ = endpoint_create(
        organization=personas.other,
        actor=personas.oscar,
        url=receiver.url,
        events=[WebhookEvent.ASSESSMENT_SUBMITTED],
    )

    assert emit(personas) == 1
    assert emit(personas) == 0  # the same event again (a retried cause)
    assert list(WebhookDelivery.objects.values_list("endpoint", flat=True)) == [endpoint[0].pk]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:8080/hook", "private, loopback or reserved"),
        ("https://10.0.0.1/hook", "private, loopback or reserved"),
        ("https://169.254.169.254/latest/meta-data", "private, loopback or reserved"),
        ("https://[::1]/hook", "private, loopback or reserved"),
        ("https://[fd00::1]/hook", "private, loopback or reserved"),
        ("https://localhost/hook", "private, loopback or reserved"),
        ("ftp://example.com/hook", "https://"),
        ("https://user:pw@example.com/hook", "user name or password"),
    ],
)
def test_addresses_inside_the_network_are_refused(personas, url, why):
    from core.errors import ServiceError

    with pytest.raises(ServiceError) as refused:
        endpoint_create(
            organization=personas.acme,
            actor=personas.alice,
            url=url,
            events=[WebhookEvent.ASSESSMENT_SCORED],
        )
    assert why in refused.value.errors["url"][0]


def test_plain_http_to_an_allowed_network_is_accepted_only_when_listed(personas, settings):
    from core.errors import ServiceError

    with pytest.raises(ServiceError):
        endpoint_create(
            organization=personas.acme,
            actor=personas.alice,
            url="http://127.0.0.1:8080/hook",
            events=[WebhookEvent.ASSESSMENT_SCORED],
        )
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    endpoint_create(
        organization=personas.acme,
        actor=personas.alice,
        url="http://127.0.0.1:8080/hook",
        events=[WebhookEvent.ASSESSMENT_SCORED],
    )
