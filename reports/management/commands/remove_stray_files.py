"""manage.py remove_stray_files [--older-than MINUTES] [--dry-run]: delete stored files (on the
disk or in the object store: settings.STORAGES "evidence" and "reports") that no database row
refers to — an upload cut off half-way (`.part`), an evidence file or a
report whose transaction was rolled back. Files younger than --older-than (default 60 minutes)
are left alone: they may belong to a request or task still running."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.files.storage import Storage
from django.core.management.base import BaseCommand
from django.utils import timezone

from assessments.models import EvidenceFile
from assessments.storage import evidence_storage
from core.storage import modified_at, stored_names
from reports.models import Report
from reports.storage import report_storage


def stray_files(storage: Storage, known: set[str], *, older_than: float) -> list[str]:
    """Names in `storage` that no row in `known` refers to, last written over `older_than`
    seconds ago."""
    cutoff = timezone.now() - dt.timedelta(seconds=older_than)
    return sorted(
        name
        for name in stored_names(storage)
        if name not in known and modified_at(storage, name) < cutoff
    )


class Command(BaseCommand):
    help = "Delete evidence and report files that no database row refers to."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--older-than", type=_minutes, default=60, metavar="MINUTES", help="0 or more"
        )
        parser.add_argument("--dry-run", action="store_true")

    def handle(self, *args: Any, older_than: int, dry_run: bool, **options: Any) -> None:
        places = (
            (evidence_storage(), set(EvidenceFile.objects.values_list("storage_name", flat=True))),
            (report_storage(), set(Report.objects.values_list("storage_name", flat=True))),
        )
        removed = 0
        for storage, known in places:
            for name in stray_files(storage, known, older_than=older_than * 60):
                self.stdout.write(f"{'would remove' if dry_run else 'removed'} {name}")
                if not dry_run:
                    storage.delete(name)
                removed += 1
        self.stdout.write(f"{removed} stray file(s)")


def _minutes(text: str) -> int:
    """A whole number of minutes from 0: a negative one would put the cut-off in the future
    and delete the files of uploads still in progress."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value
