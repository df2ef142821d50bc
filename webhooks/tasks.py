"""Celery tasks of the webhooks: each takes an id (or nothing) and calls one service."""

from __future__ import annotations

from celery import shared_task

from .services import deliveries_retry_due, delivery_attempt


@shared_task(ignore_result=True, time_limit=120, soft_time_limit=100)
def deliver_webhook(delivery_id: int) -> str | None:
    """Queued once the change that caused the event commits."""
    return delivery_attempt(delivery_id=delivery_id)


@shared_task(ignore_result=True, time_limit=600, soft_time_limit=580)
def retry_due_webhooks() -> int:
    """Run by Celery beat every minute."""
    return deliveries_retry_due()
