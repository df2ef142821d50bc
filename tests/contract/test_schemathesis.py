"""The API holds its published contract under fuzzing: schemathesis, every phase and every
check, against /api/schema/ on a live gunicorn with its own database, Redis database and media.
Its database is a SQLite file, or, in make test's PostgreSQL pass (DATABASE_URL names a
PostgreSQL server), a database of its own created on that server and dropped afterwards.

Seeded and bounded (SCHEMATHESIS_MAX_EXAMPLES, default 12) so that it runs in a few minutes;
docs/api.md documents the longer run. Tasks the API queues land in a Redis database of their own
that no worker reads (the run tests the API, not the worker), emptied afterwards.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("SCHEMATHESIS_SEED", "20260"))
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "12"))
# A Redis database of its own on the test Redis: no worker consumes what the API queues here.
REDIS_DB = 13
CONFIG = Path(__file__).with_name("schemathesis.toml")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture
def database_url(tmp_path):
    """The run's own database: on the PostgreSQL server of the test run, or a SQLite file."""
    shared = os.environ.get("DATABASE_URL", "")
    if not shared.startswith("postgres"):
        yield f"sqlite:///{tmp_path / 'contract.sqlite3'}"
        return
    server_url, _, _ = shared.rpartition("/")
    name = f"avia_contract_{os.getpid()}"

    def psql(statement: str) -> None:
        _run(["psql", "-q", f"{server_url}/postgres", "-c", statement], dict(os.environ))

    psql(f"DROP DATABASE IF EXISTS {name}")
    psql(f"CREATE DATABASE {name}")
    try:
        yield f"{server_url}/{name}"
    finally:
        psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def server(tmp_path, database_url):
    """A seeded gunicorn on a free port: (base URL, the seed's JSON, the environment)."""
    redis_port = os.environ.get("AVIA_TEST_REDIS_PORT", "6399")
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/{REDIS_DB}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "DEBUG": "false",
        "SECRET_KEY": "contract-run-" + "x" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "PROBE_KEYS_FERNET_KEY": Fernet.generate_key().decode(),
        "PROBE_ALLOWED_NETWORKS": "127.0.0.0/8",  # the seed's probe set-up names a loopback port
        "PYTHONPATH": str(ROOT),
    }
    python = sys.executable
    _run([python, "manage.py", "migrate", "-v", "0"], env)
    _run([python, "manage.py", "load_catalog"], env)
    seed = json.loads(
        _run([python, "-m", "tests.contract.seed"], {**env, "CELERY_TASK_ALWAYS_EAGER": "true"})
        .strip()
        .splitlines()[-1]
    )
    gunicorn = subprocess.Popen(
        [str(Path(python).parent / "gunicorn"), "-c", "config/gunicorn.py"],
        cwd=ROOT,
        env={
            **env,
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "2",
            "LOG_LEVEL": "WARNING",
        },
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "gunicorn.log", "w"),  # noqa: SIM115 (closed with the process)
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/schema/", timeout=5).close()
                break
            except OSError:
                assert gunicorn.poll() is None, (tmp_path / "gunicorn.log").read_text()
                assert time.monotonic() < deadline, "gunicorn did not answer within 60 s"
                time.sleep(0.3)
        yield url, seed, env
    finally:
        gunicorn.terminate()
        gunicorn.wait(timeout=30)
        subprocess.run(
            ["redis-cli", "-p", redis_port, "-n", str(REDIS_DB), "flushdb"],
            capture_output=True,
            check=False,
        )


def test_the_api_holds_its_schema_under_every_phase_and_check(server, tmp_path):
    url, seed, env = server
    report = tmp_path / "junit.xml"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "schemathesis"),
            # Before `run`: the CLI only discovers schemathesis.toml in the working directory
            # and its parents, never beside the test.
            f"--config-file={CONFIG}",
            "run",
            f"{url}/api/schema/",
            "--phases=examples,coverage,fuzzing,stateful",
            "--checks=all",
            f"--seed={SEED}",
            f"--max-examples={MAX_EXAMPLES}",
            f"--header=Authorization: Token {seed['token']}",
            "--max-response-time=5",
            "--request-timeout=30",
            "--no-color",
            "--report=junit",
            f"--report-junit-path={report}",
        ],
        cwd=ROOT,
        env={
            **env,
            "SCHEMATHESIS_HOOKS": "tests.contract.hooks",
            "AVIA_FUZZ_IDS": json.dumps({"ours": seed["ours"], "foreign": seed["foreign"]}),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    on_postgres = env["DATABASE_URL"].startswith("postgres")
    output = "schemathesis-postgresql.txt" if on_postgres else "schemathesis.txt"
    (artifacts / output).write_text(done.stdout + done.stderr)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-3000:]
