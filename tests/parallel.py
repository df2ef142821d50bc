"""pytest-xdist for `make test-fast` (and `AVIA_TEST_WORKERS=2 make test`; `-n 2 --dist
loadgroup`): both cores, and no shared server.

Each worker gets a Redis of its own (the fault tests stop and start theirs, and a task queued
by one worker's tests must never reach the other's Celery worker) and a media folder of its
own. The controller starts those Redis servers (`scripts/redis.sh`, on free ports; only when
the run has a Redis, REDIS_URL, so not for `make test-fast`) and hands their addresses to each
worker before its Django settings are read; it stops them when the run ends. The test database
is per worker already (pytest-django adds `_gw0`, `_gw1`).

Tests are dealt out by package (by file at the top of `tests/`): a package's package- and
session-wide set-ups (the Celery worker of `tests/integration` and `tests/browser`, the
incident report of `tests/reports`, the OpenID providers of `tests/sso`) then run once, not
once per worker. The packages that wait or take longest go first (FIRST), so that neither
worker is left with a long one at the end while the other idles.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The longest packages, longest first: dealt out before the rest, so that both workers are
# busy until the end (a long one dealt out last keeps one worker busy while the other idles).
# Those that mostly wait (on a Celery worker, Chromium, a server process) lead; then the unit
# tier's longest (seconds in one process, 5 December: reports 133, web 115, probes 109,
# security 65; the rest 37 or less each).
FIRST = (
    "tests/integration",
    "tests/browser",
    "tests/reports",
    "tests/web",
    "tests/probes",
    "tests/security",
    "tests/accounts",
    "tests/api",
    "tests/storage",
    "tests/portfolio",
)


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its `xdist_group`, else its package directory, else
    (a module at the top of tests/) its file."""
    path, _, rest = nodeid.partition("::")
    head, sep, group = rest.rpartition("@")
    # A parameter may contain "@" too ("[ai-inference-isolation@1]"); a group suffix never
    # ends with "]".
    if sep and group and not group.endswith("]"):
        return f"group:{group}"
    directory = path.rpartition("/")[0]
    return path if directory in ("", "tests") else directory


def rank(path: str) -> int:
    for index, package in enumerate(FIRST):
        if path == package or path.startswith(package + "/"):
            return index
    return len(FIRST)


def slowest_first(items: list[pytest.Item]) -> None:
    """The waiting packages first (in FIRST's order), the others in collection order."""
    items.sort(key=lambda item: rank(item.nodeid.partition("::")[0]))


def make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class PackageScheduling(LoadScopeScheduling):
        """`loadscope`, with the package (or group) as the scope, in collection order."""

        def __init__(self, config: pytest.Config, log: object = None) -> None:
            super().__init__(config, log)
            # Collection order (slowest_first) rather than the number of tests per scope.
            config.option.loadscopereorder = False

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return PackageScheduling(config, log)


# -- one Redis and one media folder per worker ----------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_redis() -> int:
    """A Redis of this checkout's own (`scripts/redis.sh`) on a free port."""
    for _ in range(10):
        port = _free_port()
        done = subprocess.run(
            ["scripts/redis.sh", "start", str(port)], cwd=ROOT, capture_output=True, text=True
        )
        if done.returncode == 0:
            return port
        if done.returncode != 3:  # 3: the port was taken meanwhile; another one
            raise RuntimeError(f"Redis did not start on port {port}: {done.stderr}")
    raise RuntimeError("no free port for a worker's Redis")


def stop_redis(port: int) -> None:
    subprocess.run(["scripts/redis.sh", "stop", str(port)], cwd=ROOT, capture_output=True)
    shutil.rmtree(ROOT / "var" / f"redis-{port}", ignore_errors=True)


def _on_port(url: str, port: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.hostname}:{port}"))


def worker_environment(worker: str, redis_port: int | None) -> dict[str, str]:
    """What worker `worker` (gw0, gw1…) changes in its environment before Django starts: its
    own media folder and, given a port, the broker and cache on its own Redis."""
    media_root = os.environ.get("MEDIA_ROOT", str(ROOT / "var" / "test-media"))
    environment = {"MEDIA_ROOT": f"{media_root}-{worker}"}
    if redis_port is None:
        return environment
    environment["AVIA_TEST_REDIS_PORT"] = str(redis_port)
    environment["REDIS_URL"] = _on_port(os.environ["REDIS_URL"], redis_port)
    if os.environ.get("CACHE_URL"):
        environment["CACHE_URL"] = _on_port(os.environ["CACHE_URL"], redis_port)
    return environment


class Controller:
    """The xdist controller's part: a Redis per worker, given to it as it starts."""

    def __init__(self) -> None:
        self.ports: list[int] = []

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:  # noqa: ANN001 (xdist's WorkerController)
        # A run without a Redis (REDIS_URL unset: `make test-fast`) starts none for its workers.
        port = start_redis() if os.environ.get("REDIS_URL") else None
        if port is not None:
            self.ports.append(port)
        environment = worker_environment(node.workerinput["workerid"], port)
        # The worker's interpreter is up, its pytest not yet: this runs before its settings.
        node.gateway.remote_exec(f"import os; os.environ.update({environment!r})").waitclose()

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> object | None:
        if config.getoption("dist", "no") != "loadgroup":
            return None
        return make_scheduler(config, log)

    def pytest_unconfigure(self) -> None:
        for port in self.ports:
            stop_redis(port)
