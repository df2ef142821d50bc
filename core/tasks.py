"""What every Celery task of AVIA does with a failure, in one place.

A task takes ids and calls one service (`work`). A transient error (the database or a file
system hiccup) is retried with backoff, 2, 4, 8 s; anything else — a rule that fails at run time,
a corrupt stored row, the soft time limit — would fail the same way again, so it is recorded
once (`fail`) and the task ends without retrying.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import DatabaseError, InterfaceError

TRANSIENT_ERRORS = (DatabaseError, InterfaceError, OSError)

Result = TypeVar("Result")


def run_or_record_failure(
    task: Task,
    work: Callable[[], Result],
    fail: Callable[[str], None],
    *,
    too_slow: str,
) -> Result | None:
    """`work()`, retried on a transient error; on a permanent one `fail(reason)` and None."""
    try:
        return work()
    except TRANSIENT_ERRORS as exc:
        if task.request.retries < task.max_retries:
            raise task.retry(exc=exc, countdown=2 ** (task.request.retries + 1)) from exc
        fail(_reason(exc))
    except SoftTimeLimitExceeded:
        fail(too_slow)
    except Exception as exc:  # permanent: record it, keep what was there
        fail(_reason(exc))
    return None


def _reason(exc: Any) -> str:
    return f"{type(exc).__name__}: {exc}"
