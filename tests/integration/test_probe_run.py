"""A probe run end to end: the REST API queues it, the real Celery worker runs it against the
reference vendor (a real process on a loopback port), the page-facing status shows progress and
then the result; the keys are destroyed and never written in clear anywhere."""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from assessments.models import Assessment, Channel
from probes.services.setup import probe_setup_save
from tests.probes.conftest import setup_fields
from tests.probes.vendor import reference_vendor

from .worker import eventually

PROBE_TIMEOUT = 90


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_the_worker_probes_the_launch_day_vendor_and_destroys_the_keys(
    api, worker, personas, tmp_path
):
    keys = {
        "key_a": f"sk-tenant-a-{secrets.token_hex(16)}",
        "key_b": f"sk-tenant-b-{secrets.token_hex(16)}",
    }
    vendor_id = api.post("/api/v1/vendors/", {"name": "Workers AI"}, format="json").json()["id"]
    created = api.post(
        "/api/v1/assessments/",
        {"vendor": vendor_id, "questionnaire": "ai-inference-isolation@1"},
        format="json",
    )
    assessment_id = created.json()["id"]

    with reference_vendor(tmp_path, "launch-day") as vendor:
        probe_setup_save(
            assessment=Assessment.objects.get(pk=assessment_id),
            actor=personas.ava,
            **setup_fields(keys, base_url=vendor.base_url, channel=Channel.WEB),
        )
        started = api.post(
            f"/api/v1/assessments/{assessment_id}/probe-runs/",
            {"checks": ["oversize", "canary"]},
            format="json",
        )
        assert started.status_code == 202, started.content
        run_id = started.json()["id"]
        seen_percents: list[int] = []

        def finished() -> dict | None:
            run = api.get(f"/api/v1/probe-runs/{run_id}/").json()
            seen_percents.append(run["progress"].get("percent", 0))
            return None if run["status"] in ("queued", "running") else run

        run = eventually(finished, timeout=PROBE_TIMEOUT, what="the probe run ends", worker=worker)
        received = vendor.requests()

    assert run["status"] == "done", run["error"]
    checks = run["result"]["checks"]
    assert checks["oversize"]["result"] == "accepted"
    assert checks["canary"]["result"] == "leak"
    assert run["requests_sent"] == len(received)
    assert seen_percents == sorted(seen_percents) and seen_percents[-1] == 100
    overview = api.get(f"/api/v1/assessments/{assessment_id}/probe/").json()
    assert overview["setup"]["keys_present"] is False

    # Nowhere in clear: not in the worker's log, not in the database (SQLite's file and its WAL,
    # or a dump of PostgreSQL's database).
    files = database_files(tmp_path)
    for key in keys.values():
        assert key not in worker.log_text()
        assert not grep_files(key, files)
    # The control: the set-up's own text is found there, so the search does read the rows.
    assert grep_files("reference-model", files)


def database_files(folder: Path) -> list[str]:
    """The files that hold the test database's rows."""
    settings = connection.settings_dict
    if connection.vendor != "postgresql":
        database = Path(settings["NAME"])
        return [str(path) for path in [database, *database.parent.glob(database.name + "-*")]]
    dump = folder / "database.sql"
    environment = {**os.environ, "PGPASSWORD": str(settings["PASSWORD"] or "")}
    subprocess.run(
        ["pg_dump", "--data-only", "-h", settings["HOST"] or "localhost",
         "-p", str(settings["PORT"] or 5432), "-U", settings["USER"], "-f", str(dump),
         settings["NAME"]],
        check=True, env=environment,
    )  # fmt: skip
    return [str(dump)]


def grep_files(text: str, files: list[str]) -> bool:
    """Whether `text` occurs in any of the files, byte for byte, read by another process: this
    one must not open SQLite's files itself, since closing them would drop SQLite's POSIX locks
    (fcntl locks belong to the process, not to the file descriptor)."""
    found = subprocess.run(["grep", "-F", "-a", "-q", text, *files], check=False)
    assert found.returncode in (0, 1), f"grep failed on {files}"
    return found.returncode == 0
