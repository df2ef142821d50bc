"""The Celery app `config` (`celery -A config worker`, `celery -A config beat`), configured from
Django settings."""

import os

from celery import Celery

from config.heartbeat import WorkerHeartbeat

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The sweeper's beat task lives in config/, which is not an installed app.
app.conf.include = ["config.sweeper"]
app.steps["worker"].add(WorkerHeartbeat)
