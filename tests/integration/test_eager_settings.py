"""The package's Celery worker leaves the test process's Celery app reading its eagerness from
Django's settings: a unit test run after this package in the same process (a pytest-xdist
worker deals out whole packages, in an order other than the serial run's) sets
CELERY_TASK_ALWAYS_EAGER and must see its tasks run in place."""

from __future__ import annotations

import pytest

from config.celery import app as celery_app

pytestmark = pytest.mark.integration


def test_the_celery_app_follows_the_settings_while_the_worker_runs(celery_worker_process, settings):
    assert celery_app.conf.task_always_eager is False  # tasks go to the worker
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert celery_app.conf.task_always_eager is True  # nothing pinned in the app itself
