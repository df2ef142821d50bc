"""Handing work to Celery without failing the request when the broker is down.

The broker message is only a wake-up call: each caller keeps a record of the work (a queued
row the sweeper publishes again) or does it another way when `publish` returns False.

Services name the task they queue (`"reports.tasks.render_report_task"`) rather than import it:
a task is an interface that imports its service, so a service importing its task would close a
circle. `task_named` finds the task in Celery's registry.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from celery import Task, current_app
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# Errors of an unreachable or failing broker (Celery wraps most in kombu's OperationalError).
BROKER_ERRORS = (BrokerError, RedisError, ConnectionError, TimeoutError)

# A short retry on a broken connection; a broker that stays down is the sweeper's business.
PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}


def task_named(name: str) -> Task:
    """The task registered as `name`; KeyError when no installed app defines it."""
    app = current_app
    if name not in app.tasks:
        # The tasks modules are imported as a worker imports them when it starts (autodiscovery):
        # a web process may not have imported the one that defines this task yet.
        app.loader.import_default_modules()
    return app.tasks[name]


def publish(task: Task | str, *args: Any) -> bool:
    """Send `task(*args)` now (a task, or its registered name); False (logged) when the broker
    cannot take it."""
    if isinstance(task, str):
        task = task_named(task)
    try:
        task.apply_async(args=args, retry=True, retry_policy=PUBLISH_RETRY_POLICY)
    except BROKER_ERRORS as exc:
        logger.warning(
            "could not queue %s%r (%s: %s); the sweeper will queue it again",
            task.name,
            args,
            type(exc).__name__,
            exc,
        )
        return False
    return True


def publish_on_commit(task: Task | str, *args: Any) -> None:
    """Send `task(*args)` once the current transaction commits (at once outside one)."""
    transaction.on_commit(partial(publish, task, *args))
