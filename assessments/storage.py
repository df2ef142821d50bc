"""Private file storage for evidence: under MEDIA_ROOT, never served by a public URL.

Uploads are written under a temporary name (`….part`) and renamed once complete, so a request
that dies half-way (killed web server, full disk) leaves no file that looks finished; a failure
inside the request removes the partial file at once. Whatever is left behind — a `.part` file
of a killed process, a stored file whose database row was rolled back — is removed by
`manage.py remove_stray_files`.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.storage import FileSystemStorage
from django.core.files.uploadedfile import UploadedFile

PARTIAL_SUFFIX = ".part"


def evidence_storage() -> FileSystemStorage:
    # base_url=None: files have no public address; views stream them after a permission check.
    return FileSystemStorage(location=settings.MEDIA_ROOT / "evidence", base_url=None)


class UploadTooLarge(Exception):
    """More than `max_bytes` arrived (whatever the client claimed)."""


@dataclass(frozen=True)
class StoredUpload:
    name: str  # relative to the storage's location
    size: int
    sha256: str


def store_upload(
    upload: UploadedFile, *, storage: FileSystemStorage, directory: str, max_bytes: int
) -> StoredUpload:
    """Write `upload` to `directory/<random name>` in `storage`, hashing it on the way."""
    name = f"{directory}/{uuid.uuid4().hex}"
    final = Path(storage.path(name))
    partial = final.with_name(final.name + PARTIAL_SUFFIX)
    final.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        with partial.open("xb") as handle:
            for chunk in upload.chunks():
                size += len(chunk)
                if size > max_bytes:
                    raise UploadTooLarge
                digest.update(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return StoredUpload(name=name, size=size, sha256=digest.hexdigest())
