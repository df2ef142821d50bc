"""The reference vendor as a real process on a loopback port, for the probe's tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL = "reference-model"
# Small enough that a whole probe takes seconds, large enough for the checks' shares to differ.
DECLARED_CONTEXT = 8192
START_TIMEOUT = 20


@dataclass
class RunningVendor:
    process: subprocess.Popen
    base_url: str
    request_log: Path

    def requests(self) -> list[dict]:
        """The server's own log: one entry per request it received."""
        if not self.request_log.exists():
            return []
        return [json.loads(line) for line in self.request_log.read_text().splitlines() if line]

    def forget_requests(self) -> None:
        self.request_log.unlink(missing_ok=True)


@contextmanager
def reference_vendor(
    tmp_path: Path, mode: str, *extra: str, env: dict[str, str] | None = None
) -> Iterator[RunningVendor]:
    """`python -m probes.reference_vendor --mode MODE --port 0`, until the block ends."""
    log = tmp_path / f"vendor-{mode}-{time.monotonic_ns()}.jsonl"
    command = [
        sys.executable, "-m", "probes.reference_vendor", "--mode", mode, "--port", "0",
        "--model", MODEL, "--declared-context", str(DECLARED_CONTEXT),
        "--request-log", str(log), *extra,
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        banner = _read_banner(process)
        address = banner.split("listening on ", 1)[1].split()[0]
        yield RunningVendor(process, address, log)
    finally:
        process_stop(process)
        if process.stdout:
            process.stdout.close()


def process_stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL when it has not ended after 10 s; waited for either way."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _read_banner(process: subprocess.Popen) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if "listening on" in line:
            return line
        if not line and process.poll() is not None:
            raise RuntimeError(f"the reference vendor exited with {process.returncode}")
    raise RuntimeError("the reference vendor did not start")


def closed_loopback_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return probe_socket.getsockname()[1]
