"""How django-axes names an account and answers a locked one (AXES_USERNAME_CALLABLE and
AXES_LOCKOUT_CALLABLE in settings), and the limit across accounts of one client address.

Axes locks the (account, client address) pair (settings: a guesser cannot lock an account's
owner out). An address that guesses across many accounts is stopped by
`address_locked_out`, counted from the same rows in the database."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from axes.helpers import get_client_ip_address
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone


def lockout_username(request: HttpRequest | None, credentials: Mapping[str, Any] | None) -> str:
    """The address as accounts are stored (lower case, trimmed), so that "Ava@…" and "ava@…"
    count against the same account."""
    raw = (credentials or {}).get("username")
    if raw is None and request is not None:
        raw = request.POST.get("username", "")
    return str(raw or "").strip().lower()


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: Any
) -> HttpResponse:
    minutes = max(1, int(settings.AXES_COOLOFF_TIME.total_seconds() // 60))
    return render(request, "accounts/locked.html", {"cooloff_minutes": minutes}, status=429)


def address_locked_out(request: HttpRequest) -> bool:
    """Whether the client address failed LOGIN_FAILURE_LIMIT_PER_ADDRESS sign-ins, over every
    account, within the cool-off time."""
    address = get_client_ip_address(request)
    if not address:
        return False
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    failures = AccessAttempt.objects.filter(ip_address=address, attempt_time__gte=since).aggregate(
        total=Sum("failures_since_start")
    )["total"]
    return (failures or 0) >= settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS
