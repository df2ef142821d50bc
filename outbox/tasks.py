"""Celery tasks of the outbox. A task takes ids (or nothing) and calls one service."""

from __future__ import annotations

from celery import shared_task

from .services import emails_retry_due


@shared_task(ignore_result=True, time_limit=300, soft_time_limit=280)
def retry_due_emails() -> int:
    """Run by Celery beat every minute."""
    return emails_retry_due()
