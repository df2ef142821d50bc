"""Every write of a file under MEDIA_ROOT (evidence uploads, copied evidence, rendered reports)
goes through `write_atomically`: the bytes go to a temporary name (`….part`) and are renamed
into place only once complete and on disk, so a write that fails half-way (a full disk, a killed
process) never leaves a file that looks finished; a failure inside the call removes what it
wrote at once. What a killed process leaves (a `.part` file) is removed by
`manage.py remove_stray_files`. (Issue 28: a render on a full disk left a truncated PDF and three
empty files, which kept the disk full.)"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.core.files.storage import FileSystemStorage

PARTIAL_SUFFIX = ".part"


class TooLarge(Exception):
    """More than `max_bytes` arrived (whatever the client claimed)."""


@dataclass(frozen=True)
class StoredFile:
    name: str  # relative to the storage's location
    size: int
    sha256: str


def write_atomically(
    storage: FileSystemStorage,
    name: str,
    chunks: Iterable[bytes],
    *,
    max_bytes: int | None = None,
) -> StoredFile:
    """Write `chunks` to `name` in `storage` (a name never used before), hashing them on the way.

    Raises TooLarge past `max_bytes`, and OSError when the disk refuses; either way nothing is
    left behind."""
    final = Path(storage.path(name))
    partial = final.with_name(final.name + PARTIAL_SUFFIX)
    final.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        with partial.open("xb") as handle:
            for chunk in chunks:
                size += len(chunk)
                if max_bytes is not None and size > max_bytes:
                    raise TooLarge
                digest.update(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if storage.file_permissions_mode is not None:
            os.chmod(partial, storage.file_permissions_mode)
        if final.exists():
            raise FileExistsError(f"{name} is taken")
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return StoredFile(name=name, size=size, sha256=digest.hexdigest())
