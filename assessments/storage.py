"""Private file storage for evidence (settings.STORAGES["evidence"]: a directory under
MEDIA_ROOT, or an S3-compatible object store), never served by a public URL.

Uploads are written with `core.storage.write_atomically` (complete or not at all; removed on
failure). Whatever is left behind — a `.part` file of a killed process, a stored file whose
database row was rolled back — is removed by `manage.py remove_stray_files`.
"""

from __future__ import annotations

import uuid

from django.core.files.storage import Storage
from django.core.files.uploadedfile import UploadedFile

from core.storage import StoredFile, file_storage, write_atomically


def evidence_storage() -> Storage:
    # No public address: views stream files after a permission check.
    return file_storage("evidence")


def store_upload(
    upload: UploadedFile, *, storage: Storage, directory: str, max_bytes: int
) -> StoredFile:
    """Write `upload` to `directory/<random name>` in `storage`, hashing it on the way."""
    return write_atomically(
        storage, f"{directory}/{uuid.uuid4().hex}", upload.chunks(), max_bytes=max_bytes
    )
