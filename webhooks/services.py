"""Registering webhook endpoints, writing an event's deliveries, and delivering them.

`webhook_emit` is called inside the transaction of the change that caused the event; each
subscribed endpoint gets a delivery row, published to a worker once that transaction commits.
`delivery_attempt` POSTs it, signed (`webhooks.signing`), to the endpoint's address through
the outbound-address policy, never following a redirect; a 2xx delivers it, anything else
(a 500, a refused connection, a timeout) leaves it waiting for a retry with a growing delay,
until WEBHOOK_MAX_ATTEMPTS, when it fails for good. `deliveries_retry_due` runs from Celery
beat.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Organization, User
from core.attempts import attempt_claim, due_for_retry, retry_delay
from core.encryption import secret_decrypt, secret_encrypt
from core.errors import ServiceError
from core.queueing import publish_on_commit

from .destinations import destination_problem, http_client
from .events import SUBSCRIBABLE, WebhookEvent
from .models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from .signing import DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signature

logger = logging.getLogger(__name__)

# The task that delivers one row (webhooks.tasks), queued by name: tasks import services.
DELIVER_TASK = "webhooks.tasks.deliver_webhook"
EXCERPT_CHARS = 1000  # of the receiver's answer, kept for the owner to read
MAX_ENDPOINTS = 20  # per organization


def endpoint_create(
    *,
    organization: Organization,
    actor: User,
    url: str,
    events: list[str],
    description: str = "",
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint; returns it and its signing secret (shown to the owner once)."""
    errors: dict[str, list[str]] = {}
    problem = destination_problem(url)
    if problem:
        errors["url"] = [problem]
    unknown = [event for event in events if event not in SUBSCRIBABLE]
    if unknown or not events:
        errors["events"] = [_("Choose one or more of the listed events.")]
    if WebhookEndpoint.objects.filter(organization=organization).count() >= MAX_ENDPOINTS:
        errors["url"] = [
            _("An organization can register at most %(count)s endpoints.")
            % {"count": MAX_ENDPOINTS}
        ]
    if errors:
        raise ServiceError(errors)
    secret = f"whsec_{secrets.token_urlsafe(32)}"
    endpoint = WebhookEndpoint.objects.create(
        organization=organization,
        url=url,
        description=description,
        events=sorted(set(events)),
        secret_encrypted=secret_encrypt(secret),
        created_by=actor,
    )
    return endpoint, secret


def endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    endpoint.delete()


@dataclass(frozen=True)
class Event:
    """One event of one organization: its name, its key (`assessment.scored:run:812`, unique per
    event, so an endpoint gets it once however often its cause is retried) and its `data`."""

    organization_id: int
    event: str
    key: str
    data: Mapping[str, Any]


def webhook_emit(
    *, organization: Organization, event: str, event_key: str, data: Mapping[str, Any]
) -> int:
    """Write the deliveries of one event to the organization's subscribed endpoints; returns
    how many were written."""
    return webhooks_emit([Event(organization.pk, event, event_key, data)])


def webhooks_emit(events: Sequence[Event]) -> int:
    """Write the deliveries of several events (a batch of scoring runs) in a fixed number of
    queries: one when no endpoint listens, four otherwise. Each is queued once the
    transaction commits; an event written before (its cause retried) is not written again."""
    if not events:
        return 0
    endpoints = list(
        WebhookEndpoint.objects.filter(
            organization_id__in={event.organization_id for event in events}, active=True
        ).select_related("organization")
    )
    created = timezone.now().isoformat().replace("+00:00", "Z")
    rows = [
        WebhookDelivery(
            endpoint=endpoint,
            organization_id=endpoint.organization_id,
            event=event.event,
            event_key=event.key[:200],
            payload=_payload(endpoint.organization, event, created),
        )
        for event in events
        for endpoint in endpoints
        if endpoint.organization_id == event.organization_id and event.event in endpoint.events
    ]
    if not rows:
        return 0
    keys = {row.event_key for row in rows}
    pairs = WebhookDelivery.objects.filter(endpoint__in=endpoints, event_key__in=keys)
    known = set(pairs.values_list("endpoint_id", "event_key"))
    new = {(row.endpoint_id, row.event_key) for row in rows} - known
    # A concurrent writer of the same event wins: its row stands, and ours is not written.
    WebhookDelivery.objects.bulk_create(
        [row for row in rows if (row.endpoint_id, row.event_key) in new], ignore_conflicts=True
    )
    written = [
        pk
        for pk, endpoint_id, key in pairs.values_list("pk", "endpoint_id", "event_key")
        if (endpoint_id, key) in new
    ]
    for delivery_id in written:
        publish_on_commit(DELIVER_TASK, delivery_id)
    return len(written)


def endpoint_test_send(*, endpoint: WebhookEndpoint) -> None:
    """The "Send test event" button: one delivery of `webhook.test` to this endpoint only."""
    event = Event(
        endpoint.organization_id,
        WebhookEvent.TEST,
        f"{WebhookEvent.TEST}:{secrets.token_hex(8)}",
        {"message": "A test event from AVIA: the endpoint is registered and reachable."},
    )
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        organization_id=endpoint.organization_id,
        event=event.event,
        event_key=event.key,
        payload=_payload(endpoint.organization, event, timezone.now().isoformat()),
    )
    publish_on_commit(DELIVER_TASK, delivery.pk)


def _payload(organization: Organization, event: Event, created: str) -> dict[str, Any]:
    """The JSON every delivery carries (its `id` is added when sent): documented in the
    OpenAPI schema (`webhooks.schema`)."""
    return {
        "event": event.event,
        "created": created,
        "organization": {"id": organization.pk, "name": organization.name},
        "data": dict(event.data),
    }


def delivery_attempt(*, delivery_id: int, now: dt.datetime | None = None) -> str | None:
    """Try one waiting delivery; returns its status afterwards (None: not ours to send)."""
    now = now or timezone.now()
    if not attempt_claim(
        WebhookDelivery.objects, pk=delivery_id, pending=DeliveryStatus.PENDING, now=now
    ):
        return None
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    ours = WebhookDelivery.objects.filter(pk=delivery_id, claimed_at=now)
    attempts = delivery.attempts + 1
    body = json.dumps(
        {"id": delivery.pk, **delivery.payload}, ensure_ascii=False, separators=(",", ":")
    ).encode()
    status_code, excerpt, error = _post(delivery, body, now)
    if status_code is not None and 200 <= status_code < 300:
        ours.update(
            status=DeliveryStatus.DELIVERED,
            attempts=attempts,
            response_status=status_code,
            response_excerpt=excerpt,
            last_error="",
            delivered_at=now,
            claimed_at=None,
            next_attempt_at=None,
        )
        return DeliveryStatus.DELIVERED
    gave_up = attempts >= settings.WEBHOOK_MAX_ATTEMPTS
    status = DeliveryStatus.FAILED if gave_up else DeliveryStatus.PENDING
    delay = retry_delay(attempts=attempts, base_seconds=settings.WEBHOOK_RETRY_SECONDS)
    ours.update(
        status=status,
        attempts=attempts,
        response_status=status_code,
        response_excerpt=excerpt,
        last_error=error,
        next_attempt_at=None if gave_up else now + delay,
        claimed_at=None,
    )
    logger.warning(
        "webhook delivery %s (%s) failed, attempt %s: %s",
        delivery_id,
        delivery.event,
        attempts,
        error,
    )
    return status


def _post(delivery: WebhookDelivery, body: bytes, now: dt.datetime) -> tuple[int | None, str, str]:
    """POST the signed body; returns (status or None, the answer's start, what went wrong)."""
    secret = secret_decrypt(delivery.endpoint.secret_encrypted)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "AVIA-Webhooks/1",
        EVENT_HEADER: delivery.event,
        DELIVERY_HEADER: str(delivery.pk),
        SIGNATURE_HEADER: signature(secret=secret, timestamp=int(now.timestamp()), body=body),
    }
    url = delivery.endpoint.url
    problem = destination_problem(url)
    if problem:
        return None, "", problem
    try:
        with http_client(timeout=settings.WEBHOOK_TIMEOUT_SECONDS) as client:
            response = client.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        return None, "", f"{type(exc).__name__}: {exc} ({url})"[:2000]
    excerpt = response.text[:EXCERPT_CHARS]
    if response.is_redirect:
        return response.status_code, excerpt, _("The endpoint redirected; AVIA does not follow.")
    if not response.is_success:
        return response.status_code, excerpt, f"HTTP {response.status_code}"
    return response.status_code, excerpt, ""


def deliveries_retry_due(*, now: dt.datetime | None = None, limit: int = 500) -> int:
    """Deliver what is due again; returns how many were delivered."""
    now = now or timezone.now()
    due = due_for_retry(WebhookDelivery.objects, pending=DeliveryStatus.PENDING, now=now)
    ids = list(due.order_by("created_at").values_list("pk", flat=True)[:limit])
    return sum(delivery_attempt(delivery_id=pk, now=now) == DeliveryStatus.DELIVERED for pk in ids)
