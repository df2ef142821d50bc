"""Worker heartbeats for /healthz: every Celery worker refreshes a key in Redis every
WORKER_HEARTBEAT_INTERVAL seconds; the key expires three intervals after the last refresh, so a
worker that died (even by SIGKILL) stops counting within that time."""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from celery import bootsteps
from django.conf import settings

logger = logging.getLogger(__name__)

KEY_PREFIX = "avia:worker-heartbeat:"


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def heartbeat_record(*, hostname: str) -> None:
    interval = settings.WORKER_HEARTBEAT_INTERVAL
    _client().set(f"{KEY_PREFIX}{hostname}", str(int(time.time())), ex=interval * 3)


def heartbeat_clear(*, hostname: str) -> None:
    _client().delete(f"{KEY_PREFIX}{hostname}")


def live_workers() -> list[str]:
    """Names of the workers whose heartbeat has not expired (raises RedisError if unreachable)."""
    return sorted(
        key.decode()[len(KEY_PREFIX) :] for key in _client().scan_iter(f"{KEY_PREFIX}*", count=100)
    )


class WorkerHeartbeat(bootsteps.StartStopStep):
    """Registered on the worker in config/celery.py; runs on the worker's own timer."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.timer_ref: Any = None

    def start(self, worker: Any) -> None:
        self._beat(worker)
        self.timer_ref = worker.timer.call_repeatedly(
            settings.WORKER_HEARTBEAT_INTERVAL, self._beat, (worker,), priority=10
        )

    def stop(self, worker: Any) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()
        try:
            heartbeat_clear(hostname=worker.hostname)
        except redis.RedisError:
            pass

    def _beat(self, worker: Any) -> None:
        try:
            heartbeat_record(hostname=worker.hostname)
        except redis.RedisError as exc:  # the broker is down; the worker reconnects on its own
            logger.warning("worker heartbeat not recorded: %s", exc)
