"""Object storage for the tests of this package: a moto S3 server process on loopback, and
settings.STORAGES built as config.settings builds it (config.file_storages) from the operator's
AVIA_S3_* variables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from unittest import mock

import pytest

from tests.reports.conftest import (  # noqa: F401 - the fixtures of a scored assessment
    _catalog_once,
    catalog,
    inline_tasks,
    ready_report,
    scored,
)

from .s3server import BUCKET, free_port, s3_client, s3_environment, start_moto


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory) -> Iterator[str]:
    port = free_port()
    process = start_moto("127.0.0.1", port, tmp_path_factory.mktemp("moto") / "moto.log")
    endpoint = f"http://127.0.0.1:{port}"
    s3_client(endpoint).create_bucket(Bucket=BUCKET)
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


def s3_storages(endpoint: str, prefix: str) -> dict:
    """settings.STORAGES as config.settings builds it from the operator's variables."""
    from config import settings as module
    from config.file_storages import file_storage

    with mock.patch.dict(os.environ, s3_environment(endpoint, prefix)):
        return {
            kind: file_storage(kind, backend="s3", s3_prefix=prefix)
            for kind in ("evidence", "reports")
        } | {
            kind: value
            for kind, value in module.STORAGES.items()
            if kind not in ("evidence", "reports")
        }


@pytest.fixture
def object_store(settings, s3_endpoint, request) -> str:
    """AVIA on the S3 server, under a prefix of this test's own; returns the prefix."""
    prefix = f"t{abs(hash(request.node.nodeid)) % 10**12}"
    settings.STORAGES = s3_storages(s3_endpoint, prefix)
    return prefix


@pytest.fixture
def store_down(settings) -> None:
    """AVIA on an S3 endpoint where nothing listens (a store that is away)."""
    settings.STORAGES = s3_storages(f"http://127.0.0.1:{free_port()}", "down")
