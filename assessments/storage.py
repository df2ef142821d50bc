"""Private file storage for evidence: under MEDIA_ROOT, never served by a public URL."""

from __future__ import annotations

from django.conf import settings
from django.core.files.storage import FileSystemStorage


def evidence_storage() -> FileSystemStorage:
    # base_url=None: files have no public address; views stream them after a permission check.
    return FileSystemStorage(location=settings.MEDIA_ROOT / "evidence", base_url=None)
