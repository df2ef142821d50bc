"""The project's own middleware.

* `DatabaseBusyMiddleware`: a database that stays locked (SQLite under heavy writing) answers 503
  with Retry-After, never a 500 with a traceback: the request changed nothing and may simply be
  sent again.
* `PrivateResponsesMiddleware`: what a member, an API client or a vendor link holder is shown is
  never kept by a shared proxy or the browser's disk cache (`Cache-Control: private, no-store`).
  Static files are answered by WhiteNoise before this middleware and stay cacheable."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5


def is_database_busy(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError) and "database is locked" in str(exc)


class DatabaseBusyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not is_database_busy(exc):
            return None
        logger.warning("database busy, answered 503: %s %s", request.method, request.path)
        message = _("The server is busy; nothing was saved. Please try again in a few seconds.")
        response = JsonResponse({"errors": {"server": [message]}}, status=503)
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


# The API and the vendor portal (a link holder sees the vendor's answers without signing in).
PRIVATE_PATH_PREFIXES = ("/api/", "/v/")


class PrivateResponsesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        private = request.path.startswith(PRIVATE_PATH_PREFIXES) or (user and user.is_authenticated)
        # A view that chose its own private caching (the organization's logo) keeps it.
        if private and "private" not in response.get("Cache-Control", ""):
            patch_cache_control(response, private=True, no_store=True)
        return response
