"""The web app and a Celery worker as two hosts with no shared directory: each in a network
namespace of its own, reaching PostgreSQL, Redis and an S3-compatible server (moto's server mode)
on a third, over veth pairs on a private test subnet inside the namespaces. A vendor's log
uploaded on the web host is parsed by the worker (its stored parse is cleared, so the worker must
read the object), and the PDF the worker renders is downloaded from the web host and its SHA-256
checked against the report's record and the object in the store.

    services host (avia-svc)  10.231.1.1 ── 10.231.1.2  web host (avia-web), runserver :8000
                              10.231.2.1 ── 10.231.2.2  worker host (avia-wk), celery worker

Needs root, iproute2, PostgreSQL and redis-server (skipped, saying which, without them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .s3server import BUCKET, moto_command, s3_environment

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
SVC, WEB, WORKER = "10.231.1.1", "10.231.1.2", "10.231.2.2"
SVC_FOR_WORKER = "10.231.2.1"
PG_PORT, REDIS_PORT, S3_PORT, WEB_PORT = 15499, 6399, 5099, 8000
CLIENT = Path(__file__).with_name("two_hosts_client.py")

pytestmark = pytest.mark.two_hosts


def run(*command: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, check=check, capture_output=True, text=True, **kwargs)


def in_ns(namespace: str, *command: str) -> list[str]:
    return ["ip", "netns", "exec", namespace, *command]


def wait_for(namespace: str, host: str, port: int, timeout: float = 60) -> None:
    probe = f"import socket; socket.create_connection(({host!r}, {port}), timeout=1)"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if run(*in_ns(namespace, PYTHON, "-c", probe), check=False).returncode == 0:
            return
        time.sleep(0.3)
    raise TimeoutError(f"nothing listens on {host}:{port} seen from {namespace}")


def why_not_here() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not shutil.which("ip"):
        return "iproute2 (ip) is not installed"
    if not list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")):
        return "PostgreSQL is not installed (AVIA_WITH_POSTGRES=1 scripts/system-deps.sh)"
    if not shutil.which("redis-server"):
        return "redis-server is not installed"
    return None


@pytest.fixture
def network() -> Iterator[dict[str, str]]:
    if reason := why_not_here():
        pytest.skip(reason)
    tag = uuid.uuid4().hex[:6]
    names = {"svc": f"avia-svc-{tag}", "web": f"avia-web-{tag}", "worker": f"avia-wk-{tag}"}
    try:
        for name in names.values():
            run("ip", "netns", "add", name)
            run(*in_ns(name, "ip", "link", "set", "lo", "up"))
        for host, svc_address, address in (
            ("web", SVC, WEB),
            ("worker", SVC_FOR_WORKER, WORKER),
        ):
            letter = {"web": "e", "worker": "k"}[host]
            outer, inner = f"vs{letter}{tag}", f"vh{letter}{tag}"
            run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
            run("ip", "link", "set", outer, "netns", names["svc"])
            run("ip", "link", "set", inner, "netns", names[host])
            run(*in_ns(names["svc"], "ip", "addr", "add", f"{svc_address}/24", "dev", outer))
            run(*in_ns(names["svc"], "ip", "link", "set", outer, "up"))
            run(*in_ns(names[host], "ip", "addr", "add", f"{address}/24", "dev", inner))
            run(*in_ns(names[host], "ip", "link", "set", inner, "up"))
    except subprocess.CalledProcessError as exc:
        for letter in "ek":  # a pair not yet moved into its namespaces
            run("ip", "link", "del", f"vs{letter}{tag}", check=False)
        for name in names.values():
            run("ip", "netns", "del", name, check=False)
        pytest.fail(f"network namespaces cannot be made here: {exc.cmd}: {exc.stderr}")
    yield names
    for name in names.values():
        run("ip", "netns", "del", name, check=False)  # removes the veth pairs too


@pytest.fixture
def services(network, tmp_path) -> Iterator[None]:
    """PostgreSQL, Redis and the S3 server, on the services' host."""
    svc = network["svc"]
    pg_env = {
        **os.environ,
        "AVIA_PG_LISTEN": f"{SVC},{SVC_FOR_WORKER}",
        "AVIA_PG_TRUST": "10.231.0.0/16",
    }
    subprocess.run(
        in_ns(svc, str(ROOT / "scripts" / "postgres.sh"), "start", str(PG_PORT)),
        check=True,
        env=pg_env,
    )
    processes = [
        subprocess.Popen(
            in_ns(
                svc,
                "redis-server",
                "--bind",
                "0.0.0.0",
                "--port",
                str(REDIS_PORT),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
            ),
            stdout=(tmp_path / "redis.log").open("wb"),
            stderr=subprocess.STDOUT,
        ),
        subprocess.Popen(
            in_ns(svc, *moto_command("0.0.0.0", S3_PORT)),
            stdout=(tmp_path / "moto.log").open("wb"),
            stderr=subprocess.STDOUT,
        ),
    ]
    try:
        wait_for(svc, "127.0.0.1", REDIS_PORT)
        wait_for(svc, "127.0.0.1", S3_PORT)
        create = (
            "import sys; sys.path.insert(0, '.'); from tests.storage.s3server import s3_client, "
            f"BUCKET; s3_client('http://127.0.0.1:{S3_PORT}').create_bucket(Bucket=BUCKET)"
        )
        subprocess.run(in_ns(svc, PYTHON, "-c", create), check=True, cwd=ROOT)
        yield
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
        subprocess.run(
            in_ns(svc, str(ROOT / "scripts" / "postgres.sh"), "stop", str(PG_PORT)), check=False
        )
        shutil.rmtree(ROOT / "var" / f"postgres-{PG_PORT}", ignore_errors=True)


def host_environment(services_address: str, media: Path, queue: str) -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AVIA_", "DJANGO_", "DATABASE", "REDIS", "MEDIA", "CELERY"))
    }
    return (
        environment
        | s3_environment(f"http://{services_address}:{S3_PORT}")
        | {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"postgres://avia@{services_address}:{PG_PORT}/avia",
            "REDIS_URL": f"redis://{services_address}:{REDIS_PORT}/0",
            "MEDIA_ROOT": str(media),
            "CELERY_QUEUE": queue,
            "ALLOWED_HOSTS": "*",
            "DEBUG": "true",
        }
    )


def manage(namespace: str, environment: dict[str, str], *arguments: str) -> str:
    done = subprocess.run(
        in_ns(namespace, PYTHON, "manage.py", *arguments),
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


SEED = """
from accounts.services import api_token_create
from scoring.registry import builtin_catalog
from scoring.services import catalog_load
from tests.personas import make_personas
catalog_load(catalog=builtin_catalog())
personas = make_personas()
print("TOKEN", api_token_create(user=personas.ava, organization=personas.acme, name="two hosts")[1])
"""

FORGET_PARSES = """
from assessments.models import EvidenceFile
print("CLEARED", EvidenceFile.objects.update(parse_result={}))
"""


def client(namespace: str, *arguments: str) -> dict:
    done = subprocess.run(
        in_ns(namespace, PYTHON, str(CLIENT), *arguments),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def files_in(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if path.is_file()]


def test_web_and_worker_on_two_hosts_share_only_the_object_store(network, services, tmp_path):
    web_media, worker_media = tmp_path / "web-media", tmp_path / "worker-media"
    queue = f"two-hosts-{uuid.uuid4().hex[:6]}"
    web_env = host_environment(SVC, web_media, queue)
    worker_env = host_environment(SVC_FOR_WORKER, worker_media, queue)

    manage(network["web"], web_env, "migrate", "--noinput")
    token = manage(network["web"], web_env, "shell", "-c", SEED).split("TOKEN ")[1].strip()

    logs = tmp_path / "logs"
    logs.mkdir()
    web = subprocess.Popen(
        in_ns(
            network["web"], PYTHON, "manage.py", "runserver", f"0.0.0.0:{WEB_PORT}", "--noreload"
        ),
        cwd=ROOT,
        env=web_env,
        stdout=(logs / "web.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    worker = subprocess.Popen(
        in_ns(
            network["worker"],
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-l",
            "info",
            "-c",
            "1",
            "-Q",
            queue,
            "-n",
            f"{queue}@worker-host",
        ),
        cwd=ROOT,
        env=worker_env,
        stdout=(logs / "worker.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(network["svc"], WEB, WEB_PORT)
        base = f"http://{WEB}:{WEB_PORT}"

        uploaded = client(network["svc"], "upload", base, token)
        assert uploaded["evidence"]["parsed"] is True
        # The worker must read the object itself: the parse kept at upload is forgotten.
        assert "CLEARED 1" in manage(network["web"], web_env, "shell", "-c", FORGET_PARSES)

        scored = client(network["svc"], "score", base, token, str(uploaded["assessment"]))
        run_ = scored["run"]
        assert run_["status"] == "succeeded", run_
        assert run_["evidence"]["CTX-08"]["parsed"] is True
        assert run_["evidence"]["CTX-08"]["pool"] == 681_280

        reported = client(network["svc"], "report", base, token, str(uploaded["assessment"]))
        report = reported["report"]
        assert report["status"] == "ready", report
        assert reported["starts"] == "%PDF-"
        assert reported["downloaded_sha256"] == report["sha256"]

        # The object in the store is the PDF that was downloaded.
        check = (
            "import sys, hashlib; sys.path.insert(0, '.'); "
            "from tests.storage.s3server import s3_client, BUCKET; "
            f"c = s3_client('http://127.0.0.1:{S3_PORT}'); "
            "keys = [o['Key'] for o in c.list_objects_v2(Bucket=BUCKET)['Contents']]; "
            "pdf = [k for k in keys if k.startswith('reports/')]; "
            "print(keys); print(hashlib.sha256(c.get_object(Bucket=BUCKET, Key=pdf[0])"
            "['Body'].read()).hexdigest())"
        )
        listed = subprocess.run(
            in_ns(network["svc"], PYTHON, "-c", check), cwd=ROOT, capture_output=True, text=True
        )
        assert listed.returncode == 0, listed.stderr
        keys_line, digest = listed.stdout.strip().splitlines()
        assert digest == report["sha256"]
        assert "evidence/" in keys_line
        # Neither host kept a file of its own: everything is in the store.
        assert files_in(web_media) == [] and files_in(worker_media) == []
        assert "render_report" in (logs / "worker.log").read_text(errors="replace")
        assert BUCKET
    finally:
        web.terminate()
        web.wait(timeout=15)
        os.killpg(worker.pid, 15)
        worker.wait(timeout=30)
