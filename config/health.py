"""GET /healthz: is this AVIA able to work? For load balancers and monitoring.

No sign-in and nothing sensitive in the answer: each check says only "ok" or "failing" (the
reason goes to the log). 200 when every check passes, 503 otherwise.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.heartbeat import live_workers

logger = logging.getLogger(__name__)


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _redis() -> None:
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()


def _worker() -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return  # tasks run inside the web process: there is no worker to wait for
    if not live_workers():
        raise RuntimeError("no Celery worker heartbeat")


def _media() -> None:
    # Evidence and reports are written here; a full or read-only disk fails this.
    settings.MEDIA_ROOT.mkdir(parents=True, exist_ok=True)
    probe = settings.MEDIA_ROOT / f".healthz-{uuid.uuid4().hex}"
    try:
        probe.write_bytes(b"ok")
    finally:
        probe.unlink(missing_ok=True)


CHECKS: dict[str, Callable[[], None]] = {
    "database": _database,
    "redis": _redis,
    "worker": _worker,
    "media": _media,
}


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    results = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure of a part is a failing check, never a 500
            logger.warning("health check %s failing: %s: %s", name, type(exc).__name__, exc)
            results[name] = "failing"
        else:
            results[name] = "ok"
    healthy = all(result == "ok" for result in results.values())
    return JsonResponse(
        {"status": "ok" if healthy else "failing", "checks": results},
        status=200 if healthy else 503,
    )
