"""Celery tasks of accounts. A task takes ids (or an address) and calls one service."""

from __future__ import annotations

from celery import shared_task

from .emails import password_reset_request


@shared_task(ignore_result=True, time_limit=120, soft_time_limit=100)
def send_password_reset(email: str, request_id: str) -> int:
    """A password reset asked for `email` on the site (`request_id` names that request, so a
    message delivered twice writes one email)."""
    return password_reset_request(email=email, request_id=request_id)
