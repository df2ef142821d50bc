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
from core.storage import file_storage, write_atomically

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
    # Evidence is written here (the disk under MEDIA_ROOT or the object store); a full or
    # read-only disk, or a store that is away, fails this.
    storage = file_storage("evidence")
    name = write_atomically(storage, f".healthz-{uuid.uuid4().hex}", [b"ok"]).name
    storage.delete(name)


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
