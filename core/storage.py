"""Every write of a stored file (evidence uploads, copied evidence, rendered reports) goes
through `write_atomically`, whichever storage holds it (settings.STORAGES, "evidence" and
"reports": the local disk or an S3-compatible object store).

On the local disk the bytes go to a temporary name (`….part`) and are renamed into place only
once complete and on disk, so a write that fails half-way (a full disk, a killed process) never
leaves a file that looks finished; a failure inside the call removes what it wrote at once. What
a killed process leaves (a `.part` file) is removed by `manage.py remove_stray_files`. (Issue 28:
a render on a full disk left a truncated PDF and three empty files, which kept the disk full.)

In an object store the bytes are first spooled (hashed and bounded) to a local temporary file,
then uploaded: an object appears only once its upload completed (a PUT or a completed multipart
upload is all or nothing), and a failed multipart upload is aborted. The callers reference the
name in the database only after `write_atomically` returned. A store that cannot be reached is
`StorageUnavailable` (an OSError, like a full disk)."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages

logger = logging.getLogger(__name__)

PARTIAL_SUFFIX = ".part"
# Past this, a file on its way to an object store is spooled to disk rather than memory.
SPOOL_MEMORY_BYTES = 8 * 1024 * 1024


class PrivateFileStorage(FileSystemStorage):
    """A directory under MEDIA_ROOT (read when used, so a test's MEDIA_ROOT applies) with no
    public address: files are streamed through permission-checked views."""

    def __init__(self, subdirectory: str = "", **kwargs: Any) -> None:
        self.subdirectory = subdirectory
        kwargs["base_url"] = None
        super().__init__(**kwargs)

    @property
    def base_location(self) -> str:
        return os.path.join(settings.MEDIA_ROOT, self.subdirectory)

    @property
    def location(self) -> str:
        return os.path.abspath(self.base_location)


class StorageUnavailable(OSError):
    """The object store could not be reached or refused the request."""


# What a remote store raises; callers see StorageUnavailable.
REMOTE_ERRORS: tuple[type[BaseException], ...] = (BotoCoreError, ClientError)
# Everything a write or a read of a stored file may meet: a full disk or a store that is away.
STORAGE_ERRORS: tuple[type[BaseException], ...] = (OSError, BotoCoreError, ClientError)


def file_storage(kind: str) -> Storage:
    """The storage of one kind of file ("evidence", "reports"): settings.STORAGES[kind]."""
    return storages[kind]


class TooLarge(Exception):
    """More than `max_bytes` arrived (whatever the client claimed)."""


@dataclass(frozen=True)
class StoredFile:
    name: str  # relative to the storage's location
    size: int
    sha256: str


def write_atomically(
    storage: Storage,
    name: str,
    chunks: Iterable[bytes],
    *,
    max_bytes: int | None = None,
) -> StoredFile:
    """Write `chunks` to `name` in `storage` (a name never used before), hashing them on the way.

    Raises TooLarge past `max_bytes`, and OSError when the disk or the store refuses
    (StorageUnavailable for a store); either way nothing is left behind."""
    if not isinstance(storage, FileSystemStorage):
        return _upload_whole(storage, name, chunks, max_bytes=max_bytes)
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


def _upload_whole(
    storage: Storage, name: str, chunks: Iterable[bytes], *, max_bytes: int | None
) -> StoredFile:
    digest, size = hashlib.sha256(), 0
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES) as spool:
        for chunk in chunks:
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise TooLarge
            digest.update(chunk)
            spool.write(chunk)
        spool.seek(0)
        try:
            saved = storage.save(name, File(spool, name=name))
        except REMOTE_ERRORS as exc:
            # An object of a failed upload does not exist; one whose answer was lost may.
            delete_quietly(storage, name)
            raise StorageUnavailable(str(exc)) from exc
        except BaseException:
            delete_quietly(storage, name)
            raise
    if saved != name:  # never for a new random name; a taken one is not ours to keep
        delete_quietly(storage, saved)
        raise FileExistsError(f"{name} is taken")
    return StoredFile(name=name, size=size, sha256=digest.hexdigest())


def delete_quietly(storage: Storage, name: str) -> None:
    """Remove what a failed write left; if that fails too, remove_stray_files sweeps it later."""
    try:
        storage.delete(name)
    except STORAGE_ERRORS as exc:
        logger.warning("could not remove %s after a failed write: %s", name, exc)


def stored_names(storage: Storage, directory: str = "") -> Iterator[str]:
    """Every file name in `storage` (recursively), for the stray-file sweep."""
    try:
        directories, files = storage.listdir(directory)
    except FileNotFoundError:
        return
    prefix = f"{directory}/" if directory else ""
    for file in files:
        yield prefix + file
    for sub in directories:
        yield from stored_names(storage, prefix + sub)


def modified_at(storage: Storage, name: str) -> dt.datetime:
    """When `name` was last written, as an aware datetime."""
    when = storage.get_modified_time(name)
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
