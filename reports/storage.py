"""Private file storage for reports: under MEDIA_ROOT/reports, never served by a public URL."""

from __future__ import annotations

from django.conf import settings
from django.core.files.storage import FileSystemStorage

# Read-only once written: a ready report's file is never rewritten (a new report is a new file).
REPORT_FILE_MODE = 0o440


def report_storage() -> FileSystemStorage:
    # base_url=None: files have no public address; views stream them after a permission check.
    return FileSystemStorage(
        location=settings.MEDIA_ROOT / "reports",
        base_url=None,
        file_permissions_mode=REPORT_FILE_MODE,
    )
