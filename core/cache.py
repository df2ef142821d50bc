"""The cache speeds things up; it is never needed for an answer. Every read and write of the
cache goes through here, and a cache that is away (Redis stopped, a network fault) reads as a
miss and drops the write, with one warning in the log: the caller computes from the database.
(Issue 28: a cached count made six list pages answer 500 while Redis was down.)"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What a cache that is away raises: redis-py's errors, and socket errors from the connection.
CACHE_ERRORS = (RedisError, OSError)


def cache_get(key: str, default: Any = None) -> Any:
    """The cached value, or `default` when there is none or the cache is away."""
    try:
        return cache.get(key, default)
    except CACHE_ERRORS as exc:
        logger.warning("cache unavailable, reading from the database: %s", exc)
        return default


def cache_set(key: str, value: Any, timeout: int) -> bool:
    """Store a value; False when the cache is away (the next read computes it again)."""
    try:
        cache.set(key, value, timeout)
    except CACHE_ERRORS as exc:
        logger.warning("cache unavailable, not caching: %s", exc)
        return False
    return True


def cache_count(key: str, *, window_seconds: int) -> int | None:
    """Count one more event under `key` in a window that starts with its first event; the count
    so far, or None when the cache is away (the caller decides: a database count, or none)."""
    try:
        if cache.add(key, 1, timeout=window_seconds):
            return 1
        try:
            return int(cache.incr(key))
        except ValueError:  # expired between add() and incr()
            cache.set(key, 1, timeout=window_seconds)
            return 1
    except CACHE_ERRORS as exc:
        logger.warning("cache unavailable, not counting %s: %s", key.split(":", 1)[0], exc)
        return None
