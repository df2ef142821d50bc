"""An S3-compatible server process (moto's server mode) for the object-storage tests, and the
STORAGES settings that point AVIA at it: the same backend and options a deployment uses."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

BUCKET = "avia-test"
ACCESS_KEY = "avia-test-key"
SECRET_KEY = "avia-test-secret"  # noqa: S105 - moto accepts any key
REGION = "us-east-1"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def moto_command(host: str, port: int) -> list[str]:
    server = shutil.which("moto_server", path=str(Path(sys.executable).parent))
    assert server, "moto_server is not installed (requirements.txt: moto[server])"
    return [server, "-H", host, "-p", str(port)]


def wait_for_port(host: str, port: int, *, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {host}:{port}")


def start_moto(host: str, port: int, log: Path) -> subprocess.Popen:
    with log.open("ab") as out:
        process = subprocess.Popen(
            moto_command(host, port), stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ)
        )
    wait_for_port(host, port)
    return process


def s3_client(endpoint: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
        config=Config(s3={"addressing_style": "path"}),
    )


def s3_environment(endpoint: str, prefix: str = "") -> dict[str, str]:
    """The operator's settings (docs/operations.md, "Object storage") for this server."""
    return {
        "AVIA_STORAGE": "s3",
        "AVIA_S3_BUCKET": BUCKET,
        "AVIA_S3_ENDPOINT_URL": endpoint,
        "AVIA_S3_REGION": REGION,
        "AVIA_S3_ACCESS_KEY_ID": ACCESS_KEY,
        "AVIA_S3_SECRET_ACCESS_KEY": SECRET_KEY,
        "AVIA_S3_ADDRESSING_STYLE": "path",
        "AVIA_S3_PREFIX": prefix,
        "AVIA_S3_TIMEOUT_SECONDS": "3",
    }


def object_names(endpoint: str) -> list[str]:
    listed = s3_client(endpoint).list_objects_v2(Bucket=BUCKET)
    return sorted(item["Key"] for item in listed.get("Contents", []))
