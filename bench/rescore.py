#!/usr/bin/env python
"""Rescore batch throughput: 10,000 stored assessments scored again with a new ruleset by two
Celery worker processes, on SQLite and on PostgreSQL.

For each database it builds, in a database of its own, one organization with N assessments
scored with ruleset v1 (answers varied around the incident fixture, each scored for real by the
v1 rules so the "before" findings are true), starts one `celery -A config worker` with a
prefork pool of W processes on a private queue, makes one rescore batch with v2 through the
service the API calls, and waits until the batch is finished. It prints the batch's wall time,
runs per second, failures, and checks that every assessment got exactly one new run; then
times the batch's impact as its readers get it (its page, a deep page, the API's diff, the CSV).

Databases: SQLite is a file in a temporary directory (WAL, IMMEDIATE transactions, as in
production). PostgreSQL is `DATABASE_URL` when it points at one — a throwaway database: the
bench adds its data to it — otherwise a fresh database on the private cluster of
scripts/postgres.sh (port AVIA_BENCH_POSTGRES_PORT, default 15499), stopped afterwards.
Redis is `REDIS_URL` if it answers, else a private one started with scripts/redis.sh.

The throughput target is in the portfolio-scale issue (issue 15); tuning the scoring path is
that issue's work, this bench only reports the figures.
Usage: .venv/bin/python bench/rescore.py [--assessments 10000] [--workers 2] [--only sqlite]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DATABASE = "avia_bench_rescore"
sys.path.insert(0, str(ROOT))


# -- the orchestrator ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def redis_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL", "")
    if (
        url
        and subprocess.run(
            ["redis-cli", "-u", url, "ping"], capture_output=True, text=True
        ).stdout.strip()
        == "PONG"
    ):
        yield url
        return
    port = str(free_port())
    subprocess.run([ROOT / "scripts" / "redis.sh", "start", port], check=True)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        subprocess.run([ROOT / "scripts" / "redis.sh", "stop", port], check=False)


@contextlib.contextmanager
def private_postgres() -> Iterator[str | None]:
    """A fresh database on the private cluster of scripts/postgres.sh (port
    AVIA_BENCH_POSTGRES_PORT, tuned as for the tests and the other benchmarks), or None when
    PostgreSQL is not installed. The cluster is stopped afterwards."""
    from bench.common import POSTGRES_PORT, SCRIPT, postgres_url

    if subprocess.run([SCRIPT, "start", str(POSTGRES_PORT)], check=False).returncode == 3:
        yield None
        return
    try:
        admin = postgres_url("postgres")
        subprocess.run(
            ["psql", "-q", admin, "-c", f"DROP DATABASE IF EXISTS {DATABASE}"], check=True
        )
        yield postgres_url(DATABASE)
    finally:
        subprocess.run([SCRIPT, "stop", str(POSTGRES_PORT)], check=False)


def measure(label: str, database_url: str, broker: str, args: argparse.Namespace) -> dict:
    media = tempfile.mkdtemp(prefix="avia-bench-media-")
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": broker,
        "MEDIA_ROOT": media,
        "CELERY_TASK_ALWAYS_EAGER": "False",
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + uuid.uuid4().hex,
        "ALLOWED_HOSTS": "localhost,bench.local",
        "SECURE_COOKIES": "false",
        # Production settings (DEBUG off: a worker in debug mode keeps every query in memory).
        "PROBE_KEYS_FERNET_KEY": Fernet.generate_key().decode(),
        "LOG_LEVEL": "WARNING",
    }
    command = [PYTHON, __file__, "--measure", label, "--assessments", str(args.assessments)]
    command += ["--workers", str(args.workers)]
    try:
        finished = subprocess.run(
            command, env=environment, cwd=ROOT, capture_output=True, text=True, check=False
        )
    finally:
        shutil.rmtree(media, ignore_errors=True)
    if finished.returncode != 0:
        print(finished.stdout[-3000:], finished.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{label}: the measurement failed")
    return json.loads(finished.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--assessments", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure_here(args.measure, args.assessments, args.workers)))
        return
    results = []
    with redis_url() as broker:
        if args.only in (None, "sqlite"):
            directory = Path(tempfile.mkdtemp(prefix="avia-bench-sqlite-"))
            try:
                url = (
                    f"sqlite:///{directory / 'bench.sqlite3'}?timeout=60&transaction_mode=IMMEDIATE"
                )
                results.append(measure("SQLite", url, broker, args))
            finally:
                shutil.rmtree(directory, ignore_errors=True)
        if args.only in (None, "postgresql"):
            given = os.environ.get("DATABASE_URL", "")
            if given.startswith(("postgres://", "postgresql://")):
                results.append(measure("PostgreSQL", given, broker, args))
            else:
                with private_postgres() as url:
                    if url is None:
                        print("PostgreSQL: skipped (no DATABASE_URL, PostgreSQL not installed)")
                    else:
                        results.append(measure("PostgreSQL", url, broker, args))
    for r in results:
        print(
            f"{r['database']}: {r['assessments']:,} assessments rescored by {r['workers']} worker "
            f"processes in {r['seconds']:.1f} s = {r['runs_per_second']:,.1f} runs/s; "
            f"failures {r['failures']}; batch made in {r['batch_seconds']:.2f} s; "
            f"every assessment rescored once: {r['each_once']} "
            f"(data built in {r['setup_seconds']:.0f} s)"
        )
        reads = ", ".join(f"{name} {ms:,.0f} ms" for name, ms in r["impact_ms"].items())
        print(f"  its impact, read through the web application: {reads}")


# -- one measurement, in a process of its own (its DATABASE_URL set) -----------------------


def measure_here(label: str, count: int, workers: int) -> dict:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    # A queue of our own, for every task this process and the worker send (the fan-out task
    # queues the chunks from inside the worker).
    queue = f"avia-bench-{uuid.uuid4().hex[:10]}"
    os.environ["CELERY_QUEUE"] = queue
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:  # a property of the file: the workers get it too
            cursor.execute("PRAGMA journal_mode=WAL")
    call_command("migrate", verbosity=0)
    call_command("load_catalog", stdout=open(os.devnull, "w"))  # noqa: SIM115
    started = time.perf_counter()
    member = populate(count)
    with connection.cursor() as cursor:  # statistics, as a database that grew would have them
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    setup_seconds = time.perf_counter() - started

    from config.celery import app as celery_app

    nodename = f"{queue}@{socket.gethostname()}"
    worker = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            "prefork",
            "--concurrency",
            str(workers),
            "--loglevel",
            "WARNING",
            "--queues",
            queue,
            "--hostname",
            nodename,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],  # fmt: skip
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=sys.stderr,
    )
    try:
        deadline = time.monotonic() + 60
        while not celery_app.control.ping(destination=[nodename], timeout=0.5):
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("the worker did not start")
        return rescore(label, member, count, workers) | {"setup_seconds": setup_seconds}
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        with celery_app.connection_for_write() as broker:
            broker.default_channel.queue_delete(queue)


def populate(count: int):  # noqa: ANN201
    """One organization with `count` assessments scored with v1, written in bulk (building them
    one by one through the services would take an hour); the v1 results are computed by the
    v1 rules from each assessment's own answers."""
    import datetime as dt

    from django.db import transaction
    from django.utils import timezone
    from score import answer_variants  # bench/score.py: answers varied around the incident

    from accounts.models import Membership, User
    from accounts.services import organization_create
    from accounts.tenancy import OrgContext
    from assessments.models import (
        Answer,
        Assessment,
        AssessmentStatus,
        Finding,
        RunStatus,
        ScoringRun,
        Vendor,
    )
    from questionnaires.models import QuestionnaireVersion
    from questionnaires.validation import validate_answers
    from scoring.models import Ruleset
    from scoring.registry import builtin_catalog

    organization = organization_create(name="Bench Procurement", owner_email="owner@bench.test")
    owner = User.objects.get(email="owner@bench.test")
    questionnaire = QuestionnaireVersion.objects.get(
        organization__isnull=True, slug="ai-inference-isolation", version="1"
    )
    v1 = Ruleset.objects.get(organization__isnull=True, slug="incident-2026-kv", version="1")
    engine = builtin_catalog().compiled(v1.key)
    base = json.loads((ROOT / "examples" / "incident-2026-launch.json").read_text())["answers"]
    as_of = dt.date(2026, 12, 1)
    now = timezone.now()
    with transaction.atomic():
        vendors = Vendor.objects.bulk_create(
            Vendor(organization=organization, name=f"Vendor {i:03d}") for i in range(100)
        )
        assessments, answers, runs, results = [], [], [], []
        for i, raw in enumerate(answer_variants(base, count)):
            values = validate_answers(questionnaire.spec, raw).values
            result = engine.score(values, as_of=as_of)
            results.append((values, result))
            assessments.append(
                Assessment(
                    organization=organization,
                    vendor=vendors[i % len(vendors)],
                    number=i + 1,  # a new organization's first assessments
                    questionnaire=questionnaire,
                    status=AssessmentStatus.APPROVED if i % 3 == 0 else AssessmentStatus.SCORED,
                    created_by=owner,
                    submitted_at=now,
                    risk_score=result.risk_score,
                    risk_tier=result.risk_tier,
                )
            )
        Assessment.objects.bulk_create(assessments, batch_size=2000)
        for assessment, (values, result) in zip(assessments, results, strict=True):
            answers.extend(
                Answer(
                    assessment=assessment,
                    question_code=code,
                    value=value.isoformat() if hasattr(value, "isoformat") else value,
                )
                for code, value in values.items()
            )
            runs.append(
                ScoringRun(
                    assessment=assessment,
                    ruleset=v1,
                    status=RunStatus.SUCCEEDED,
                    as_of=as_of,
                    risk_score=result.risk_score,
                    risk_tier=result.risk_tier,
                    attempts=1,
                    finished_at=now,
                )
            )
        Answer.objects.bulk_create(answers, batch_size=5000)
        ScoringRun.objects.bulk_create(runs, batch_size=2000)
        Finding.objects.bulk_create(
            (
                Finding(
                    run=run,
                    rule_id=f.rule_id,
                    severity=f.severity,
                    points=f.points,
                    section=f.section,
                    position=position,
                )
                for run, (_values, result) in zip(runs, results, strict=True)
                for position, f in enumerate(result.findings)
            ),
            batch_size=5000,
        )
        for assessment, run in zip(assessments, runs, strict=True):
            assessment.latest_run = run
        Assessment.objects.bulk_update(assessments, ["latest_run"], batch_size=2000)
    membership = Membership.objects.get(user=owner, organization=organization)
    return OrgContext(user=owner, organization=organization, membership=membership)


def rescore(label: str, member, count: int, workers: int) -> dict:  # noqa: ANN001
    from django.db.models import Count

    from assessments.models import Assessment, Channel, ScoringRun
    from portfolio.models import BatchStatus, ItemState, RescoreBatch
    from portfolio.services import rescore_batch_create

    started = time.perf_counter()
    batch = rescore_batch_create(
        member=member, ruleset_key="incident-2026-kv@2", channel=Channel.SYSTEM
    )
    batch_seconds = time.perf_counter() - started
    deadline = time.monotonic() + 3 * 3600
    while RescoreBatch.objects.get(pk=batch.pk).status not in (
        BatchStatus.DONE,
        BatchStatus.FAILED,
    ):
        if time.monotonic() > deadline:
            raise SystemExit("the batch did not finish in three hours")
        time.sleep(0.25)
    seconds = time.perf_counter() - started
    failures = batch.items.filter(state=ItemState.FAILED).count()
    new_runs = ScoringRun.objects.filter(ruleset__version="2")
    per_assessment = set(
        new_runs.values("assessment").annotate(n=Count("pk")).values_list("n", flat=True)
    )
    rescored = Assessment.objects.filter(latest_run__ruleset__version="2").count()
    impact = impact_reads(batch.pk, member.user)
    return {
        "database": label,
        "assessments": count,
        "workers": workers,
        "seconds": seconds,
        "batch_seconds": batch_seconds,
        "runs_per_second": count / seconds,
        "failures": failures,
        "each_once": per_assessment == {1} and new_runs.count() == count and rescored == count,
        "impact_ms": impact,
    }


def impact_reads(batch_id: int, user: object) -> dict[str, float]:
    """The batch's impact as its readers get it, through the web application (median ms of 5
    after one warm-up): its page, a deep page, the API's whole diff, the CSV."""
    from statistics import median

    from bench.pages import Site

    site = Site(user)
    calls = {
        "page": f"/rescore/batches/{batch_id}/",
        "deep page": f"/rescore/batches/{batch_id}/?page=100",
        "API (every change)": f"/api/v1/rescore-batches/{batch_id}/",
        "CSV": f"/rescore/batches/{batch_id}/changes.csv",
    }
    timings = {}
    for name, path in calls.items():
        status, _body = site.get(path)
        assert status == 200, (path, status)
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            site.get(path)
            samples.append((time.perf_counter() - started) * 1000)
        timings[name] = median(samples)
    return timings


if __name__ == "__main__":
    main()
