"""The Celery app `config` (`celery -A config worker`, `celery -A config beat`), configured from
Django settings."""

import os

from celery import Celery

from config.heartbeat import WorkerHeartbeat

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The sweeper's beat task is not in a `tasks` module, which autodiscovery would find.
app.conf.include = ["reports.sweeper"]
app.steps["worker"].add(WorkerHeartbeat)


def route_all_tasks_to(routes: dict | None) -> None:
    """Set this process's task routes now (tests and benchmarks send to queues of their own).
    Celery builds its router once, on the first send, so changing `task_routes` alone would
    not change where the next task goes."""
    app.conf.task_routes = routes
    app.amqp.flush_routes()
    app.amqp.__dict__.pop("router", None)  # the cached router, rebuilt on next use
