"""Private file storage for reports (settings.STORAGES["reports"]: MEDIA_ROOT/reports, read-only
once written, or an S3-compatible object store), never served by a public URL."""

from __future__ import annotations

from django.core.files.storage import Storage

from core.storage import file_storage


def report_storage() -> Storage:
    # No public address: views stream files after a permission check.
    return file_storage("reports")
