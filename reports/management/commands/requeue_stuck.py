"""manage.py requeue_stuck: queue again, once, the scoring runs and reports whose broker message
was lost (what Celery beat does every SWEEPER_INTERVAL seconds)."""

from typing import Any

from django.core.management.base import BaseCommand

from reports.sweeper import requeue_stuck


class Command(BaseCommand):
    help = "Queue again the scoring runs and reports that are stuck queued or running."

    def handle(self, *args: Any, **options: Any) -> None:
        counts = requeue_stuck()
        self.stdout.write(
            ", ".join(f"{name}: {count} queued again" for name, count in counts.items())
        )
