"""Private file storage for evidence: under MEDIA_ROOT, never served by a public URL.

Uploads are written with `core.storage.write_atomically` (a temporary name, renamed once
complete; removed on failure). Whatever is left behind — a `.part` file of a killed process, a
stored file whose database row was rolled back — is removed by `manage.py remove_stray_files`.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.core.files.uploadedfile import UploadedFile

from core.storage import StoredFile, write_atomically


def evidence_storage() -> FileSystemStorage:
    # base_url=None: files have no public address; views stream them after a permission check.
    return FileSystemStorage(location=settings.MEDIA_ROOT / "evidence", base_url=None)


def store_upload(
    upload: UploadedFile, *, storage: FileSystemStorage, directory: str, max_bytes: int
) -> StoredFile:
    """Write `upload` to `directory/<random name>` in `storage`, hashing it on the way."""
    return write_atomically(
        storage, f"{directory}/{uuid.uuid4().hex}", upload.chunks(), max_bytes=max_bytes
    )
