"""How django-axes names an account and answers a locked one (AXES_USERNAME_CALLABLE and
AXES_LOCKOUT_CALLABLE in settings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


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
