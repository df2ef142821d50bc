"""manage.py remove_stray_files [--older-than MINUTES] [--dry-run]: delete files under MEDIA_ROOT
that no database row refers to — an upload cut off half-way (`.part`), an evidence file or a
report whose transaction was rolled back. Files younger than --older-than (default 60 minutes)
are left alone: they may belong to a request or task still running."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.files.storage import FileSystemStorage
from django.core.management.base import BaseCommand

from assessments.models import EvidenceFile
from assessments.storage import evidence_storage
from reports.models import Report
from reports.storage import report_storage


def stray_files(storage: FileSystemStorage, known: set[str], *, older_than: float) -> list[Path]:
    root = Path(storage.location)
    if not root.is_dir():
        return []
    cutoff = time.time() - older_than
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and path.relative_to(root).as_posix() not in known
        and path.stat().st_mtime < cutoff
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
            for path in stray_files(storage, known, older_than=older_than * 60):
                self.stdout.write(f"{'would remove' if dry_run else 'removed'} {path}")
                if not dry_run:
                    path.unlink(missing_ok=True)
                removed += 1
        self.stdout.write(f"{removed} stray file(s)")


def _minutes(text: str) -> int:
    """A whole number of minutes from 0: a negative one would put the cut-off in the future
    and delete the files of uploads still in progress."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value
