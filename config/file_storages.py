"""Where evidence files and reports live: the options of settings.STORAGES for each kind of
file, on the local disk under MEDIA_ROOT or on an S3-compatible object store
(docs/operations.md, "Object storage"), and how much of a file a transfer may hold in memory.

Apart from `config.settings` because it is a block of its own (boto3's and django-storages'
options, each with its reason) that settings only calls; `config.settings` still reads
AVIA_STORAGE and AVIA_S3_PREFIX and builds STORAGES.
"""

from __future__ import annotations

from typing import Any

from boto3.s3.transfer import TransferConfig
from botocore.config import Config

from config.environment import env_int, env_str

# Parts of 8 MB, two at a time and at most two read ahead: a transfer holds about 16-32 MB in
# memory, not the whole file (boto3's defaults buffered 56 MB for a 50 MB upload: ten parts).
# A download queues at most 16 chunks of 256 KB for the writer (boto3's default of 100 let a
# slow disk on a busy machine hold 25 MB of the file in that queue).
S3_TRANSFER = TransferConfig(
    multipart_threshold=8 * 1024 * 1024,
    multipart_chunksize=8 * 1024 * 1024,
    max_concurrency=2,
    max_io_queue=16,
)
S3_TRANSFER.max_in_memory_upload_chunks = 2  # s3transfer's setting, not an argument of boto3's


def file_storage(kind: str, *, backend: str, s3_prefix: str) -> dict[str, Any]:
    """The STORAGES entry of one kind of file ("evidence" or "reports") on `backend`, the
    AVIA_STORAGE ("local" or "s3"); the S3 options come from the AVIA_S3_* variables."""
    if backend == "local":
        options: dict[str, Any] = {"subdirectory": kind}
        if kind == "reports":
            # Read-only once written: a ready report's file is never rewritten.
            options["file_permissions_mode"] = 0o440
        return {"BACKEND": "core.storage.PrivateFileStorage", "OPTIONS": options}
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("AVIA_S3_BUCKET", ""),
            "endpoint_url": env_str("AVIA_S3_ENDPOINT_URL", "") or None,
            "region_name": env_str("AVIA_S3_REGION", "") or None,
            "access_key": env_str("AVIA_S3_ACCESS_KEY_ID", "") or None,
            "secret_key": env_str("AVIA_S3_SECRET_ACCESS_KEY", "") or None,
            "location": f"{s3_prefix}/{kind}" if s3_prefix else kind,
            "default_acl": None,  # the bucket's own (private) policy
            "file_overwrite": False,
            "querystring_auth": True,
            # Reading an object spools it to a temporary file past 8 MB, not to memory.
            "max_memory_size": 8 * 1024 * 1024,
            "transfer_config": S3_TRANSFER,
            "client_config": Config(
                connect_timeout=env_int("AVIA_S3_TIMEOUT_SECONDS", 10),
                read_timeout=env_int("AVIA_S3_TIMEOUT_SECONDS", 10),
                retries={"max_attempts": 2, "mode": "standard"},
                signature_version="s3v4",
                # "path" for MinIO, Ceph RGW and Garage on one host name; "virtual" for AWS.
                s3={"addressing_style": env_str("AVIA_S3_ADDRESSING_STYLE", "") or None},
            ),
        },
    }
