"""A real Redis broker and a real `celery -A config worker` process for the integration tests.

The worker is a separate process, so it cannot see pytest-django's usual in-memory SQLite test
database. When integration tests are selected, the session's test database is therefore a file
under `var/` (the other tests of the session then use that file too; they roll back as usual),
and the worker gets `DATABASE_URL` pointing at it. Both sides wait on a busy database instead of
failing ("database is locked"), the file is switched to WAL so the test's polling reads never
block the worker's commits, and every transaction starts IMMEDIATE so two writers queue up
instead of deadlocking. The tests use `transaction=True`: what the API writes is committed and
visible to the worker, and the tables are emptied after each test.

Scoring tasks of this session go to a queue of their own, which only this session's worker
consumes, so two test runs against the same Redis cannot steal each other's tasks.
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from accounts.services import api_token_create
from config.celery import app as celery_app
from scoring.registry import builtin_catalog
from scoring.services import catalog_load
from tests.conftest import LOOPBACK
from tests.personas import Personas, make_personas

from .worker import Worker, eventually, route_all_tasks_to, start_celery

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
TEST_DATABASE = ROOT / "var" / f"test-integration-{os.getpid()}.sqlite3"
SQLITE_ENGINE = "django.db.backends.sqlite3"
# Seconds a connection waits for another process's lock before "database is locked".
SQLITE_BUSY_TIMEOUT = 20
WORKER_START_TIMEOUT = 45


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # trylast: runs after `-m`/`-k` deselection, before any database is created. A session that
    # runs no integration test keeps the fast in-memory database.
    if any(item.get_closest_marker("integration") for item in items):
        _use_a_test_database_file()


def _use_a_test_database_file() -> None:
    database = settings.DATABASES["default"]
    if database["ENGINE"] != SQLITE_ENGINE:
        return  # a server database (PostgreSQL) is visible to the worker as it is
    TEST_DATABASE.parent.mkdir(parents=True, exist_ok=True)
    database.setdefault("TEST", {})["NAME"] = str(TEST_DATABASE)
    database.setdefault("OPTIONS", {}).update(
        timeout=SQLITE_BUSY_TIMEOUT,
        transaction_mode="IMMEDIATE",
        # WAL is a property of the file, so the worker gets it too; NORMAL skips the fsync of
        # every commit (a test database need not survive a power cut).
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )


def _worker_database_url() -> str:
    """DATABASE_URL of the test database (created by now), for the worker process."""
    database = connection.settings_dict
    if database["ENGINE"] == SQLITE_ENGINE:
        name = str(database["NAME"])
        if connection.is_in_memory_db():
            pytest.fail(
                f"the test database is in memory ({name}), so a worker process cannot see it: "
                "tests/integration/conftest.py should have switched it to a file",
                pytrace=False,
            )
        return f"sqlite:///{name}?timeout={SQLITE_BUSY_TIMEOUT}&transaction_mode=IMMEDIATE"
    if "postgresql" in database["ENGINE"]:
        credentials = f"{quote(database['USER'] or '')}:{quote(str(database['PASSWORD'] or ''))}"
        location = f"{database['HOST'] or 'localhost'}:{database['PORT'] or 5432}"
        return f"postgres://{credentials}@{location}/{quote(database['NAME'])}"
    pytest.fail(f"no worker DATABASE_URL for {database['ENGINE']}", pytrace=False)


# -- Redis and the worker ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The broker; unreachable is a failure, never a skip: these tests are the only proof that
    scoring works end to end."""
    url = settings.REDIS_URL
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2).ping()
        return url
    except redis.RedisError as exc:
        problem = str(exc)
    pytest.fail(
        f"integration tests need Redis at REDIS_URL={url} and cannot reach it ({problem}). "
        "scripts/test.sh starts one; by hand: scripts/redis.sh start 6399 && "
        "export REDIS_URL=redis://127.0.0.1:6399/0",
        pytrace=False,
    )


# Package scope: the worker runs while this directory's tests do, and the Celery app's routing
# is back to normal for whatever tests of the session come after them.
@pytest.fixture(scope="package")
def celery_worker_process(
    request: pytest.FixtureRequest,
    django_db_setup: None,
    redis_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Worker]:
    database_url = _worker_database_url()

    # Evidence files are written by the API in this process and read by the worker; tasks go
    # to it, not run here. Through Django's settings, which the Celery app reads on every
    # use: `celery_app.conf.update(task_always_eager=...)` would pin the value in the app for
    # the rest of the process, and a unit test run after this package in the same process (a
    # pytest-xdist worker deals out whole packages) would set CELERY_TASK_ALWAYS_EAGER in vain.
    media_root = tmp_path_factory.mktemp("media")
    media_override = override_settings(MEDIA_ROOT=media_root, CELERY_TASK_ALWAYS_EAGER=False)
    media_override.enable()

    # A queue of this session's own: another test run on the same Redis cannot take its tasks,
    # and nothing older than this session can be waiting in it.
    queue = f"avia-test-{uuid.uuid4().hex[:12]}"
    nodename = f"{queue}@{socket.gethostname()}"
    previous_routes = celery_app.conf.task_routes
    route_all_tasks_to({"*": {"queue": queue}})

    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"celery-worker-{queue}.log"
    environment = worker_environment(
        database_url=database_url, redis_url=redis_url, media_root=media_root, queue=queue
    )
    arguments = worker_arguments(queue=queue, nodename=nodename)
    log_path.write_text("", encoding="utf-8")
    process = start_celery(arguments, environment=environment, log_path=log_path)
    worker = Worker(process, nodename, queue, log_path, redis_url, arguments, environment)
    try:
        worker.wait_until_ready(timeout=WORKER_START_TIMEOUT)
        yield worker
    finally:
        worker.stop()
        with celery_app.connection_for_write() as broker:
            broker.default_channel.queue_delete(queue)
        route_all_tasks_to(previous_routes)
        media_override.disable()
        if request.session.testsfailed == 0:
            log_path.unlink(missing_ok=True)  # kept only to explain a failure


def worker_environment(
    *, database_url: str, redis_url: str, media_root: Path, queue: str, **extra: str
) -> dict[str, str]:
    """What a worker (or beat) process of the tests runs with: the test database, the broker,
    the shared media folder; whatever it queues itself (the sweeper) goes to `queue`."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "MEDIA_ROOT": str(media_root),
        "CELERY_TASK_ALWAYS_EAGER": "False",
        "CELERY_QUEUE": queue,
        # The sweeper runs only where a test starts Celery beat; then it is quick to act.
        "SWEEPER_QUEUED_AFTER": "3",
        # Webhooks go to the tests' receivers on loopback, and are retried within a second.
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        "WEBHOOK_RETRY_SECONDS": "1",
        "PYTHONUNBUFFERED": "1",
        "PROBE_ALLOWED_NETWORKS": LOOPBACK,  # the reference vendors listen there
        **extra,
    }


def worker_arguments(
    *, queue: str, nodename: str, pool: str = "solo", concurrency: int = 1
) -> list[str]:
    return [
        "worker", "--pool", pool, "--concurrency", str(concurrency), "--loglevel", "INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        "--queues", queue, "--hostname", nodename,
    ]  # fmt: skip


# -- per test ------------------------------------------------------------------------------------


@pytest.fixture
def worker(celery_worker_process: Worker, transactional_db: None) -> Iterator[Worker]:
    """The running worker. After the test it must be idle before the tables are emptied, so a
    late task cannot write into the next test's data."""
    if celery_worker_process.process.poll() is not None:
        pytest.fail(f"the Celery worker is not running\n{celery_worker_process.log_tail()}")
    catalog_load(catalog=builtin_catalog())  # emptied with every other table after each test
    yield celery_worker_process
    celery_worker_process.wait_until_idle()


@pytest.fixture
def personas(worker: Worker) -> Personas:
    return make_personas()


@pytest.fixture
def api(personas: Personas) -> APIClient:
    """Ava, the assessor at Acme, calling the REST API with a personal token."""
    _token, key = api_token_create(
        user=personas.ava, organization=personas.acme, name="integration"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture(autouse=True)
def private_media():
    """Overrides the per-test media folder of tests/conftest.py: the worker process reads
    evidence from the folder set up once for the session."""


@pytest.fixture
def killable_worker(celery_worker_process: Worker):
    """A prefork worker with two processes on a queue of its own (so that scoring and a render
    run at the same time), which the test may SIGKILL and restart."""
    queue = f"{celery_worker_process.queue}-killable"
    nodename = f"{queue}@{socket.gethostname()}"
    environment = {
        **celery_worker_process.environment,
        "CELERY_QUEUE": queue,
        # The broker hands a killed worker's messages out again after this (production: 60 s);
        # each kill test waits half a minute less. Any consumer restores any unacknowledged
        # message this old (the main worker's too), so it must stay well above the longest
        # task of these tests (a few seconds; they are idempotent should one run twice).
        "CELERY_VISIBILITY_TIMEOUT": "30",
    }
    arguments = worker_arguments(queue=queue, nodename=nodename, pool="prefork", concurrency=2)
    log_path = ARTIFACTS / f"celery-worker-{queue}.log"
    previous_routes = celery_app.conf.task_routes
    route_all_tasks_to({"*": {"queue": queue}})
    process = start_celery(arguments, environment=environment, log_path=log_path)
    killable = Worker(
        process, nodename, queue, log_path, celery_worker_process.redis_url, arguments, environment
    )
    try:
        killable.wait_until_ready()
        yield killable
    finally:
        killable.stop()
        route_all_tasks_to(previous_routes)
        with celery_app.connection_for_write() as broker:
            broker.default_channel.queue_delete(queue)


# -- Redis stopped and started ------------------------------------------------------------------


class RedisServer:
    """The tests' Redis, stopped and started with scripts/redis.sh (only ever our own)."""

    def __init__(self, url: str) -> None:
        self.port = str(urlparse(url).port or 6379)

    def _script(self, action: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["scripts/redis.sh", action, self.port], cwd=ROOT, capture_output=True, text=True
        )

    def stop(self) -> None:
        self._script("stop")
        eventually(lambda: not self._answers(), timeout=10, what="Redis has stopped")

    def start(self) -> None:
        result = self._script("start")
        assert result.returncode == 0, result.stderr

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", int(self.port)), timeout=0.5):
                return True
        except OSError:
            return False


@pytest.fixture
def redis_server(redis_url):
    server = RedisServer(redis_url)
    if server._script("status").returncode != 0:
        pytest.fail(
            f"these tests stop and start Redis on port {server.port}, so it must be one this "
            "checkout started (scripts/redis.sh start PORT); another Redis is never stopped",
            pytrace=False,
        )
    yield server
    server.start()  # whatever happened, leave it running for the next tests


@pytest.fixture
def redis_cache(settings, redis_url):
    """The cache in Redis (as in production, DEBUG off), so that the vendor-link limit meets
    the outage too."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url.rsplit("/", 1)[0] + "/1",
        }
    }
