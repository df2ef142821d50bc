"""What the benchmarks share: a private database (a SQLite file under var/, or a database on
the private PostgreSQL cluster of scripts/postgres.sh), a portfolio built from incident
assessments made by `assessments.factories` and copied in bulk by `bench/portfolio.py`, and
percentiles."""

from __future__ import annotations

import base64
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"
POSTGRES_PORT = int(os.environ.get("AVIA_BENCH_POSTGRES_PORT", "15499"))
ORGANIZATION = "Bench Portfolio Org"
SCRIPT = str(ROOT / "scripts" / "postgres.sh")


def postgres_url(name: str) -> str:
    """Starts the private cluster; the URL of database `name` on it (created if missing)."""
    subprocess.run([SCRIPT, "start", str(POSTGRES_PORT)], check=True)
    url = subprocess.run(
        [SCRIPT, "url", str(POSTGRES_PORT)], check=True, capture_output=True, text=True
    ).stdout.strip()
    exists = subprocess.run(
        ["psql", "-tAq", url, "-c", f"SELECT 1 FROM pg_database WHERE datname='{name}'"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    if not exists:
        subprocess.run(["psql", "-q", url, "-c", f"CREATE DATABASE {name}"], check=True)
    return url.rsplit("/", 1)[0] + "/" + name


def database_url(database: str, name: str) -> str:
    if database == "sqlite":
        return f"sqlite:///{VAR / (name + '.sqlite3')}"  # WAL, IMMEDIATE: config/settings.py
    return postgres_url(name)


def configure(
    database: str, name: str, *, rebuild: bool = False, eager: bool = True
) -> Callable[[], None]:
    """Point Django at the benchmark database `name` (production settings, a per-process
    cache) and set it up; returns what stops what was started."""
    VAR.mkdir(exist_ok=True)
    media = VAR / f"{name}-media-{database}"
    if rebuild:
        _drop(database, name, media)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", "avia-bench")
    os.environ.setdefault("ALLOWED_HOSTS", "bench.local")
    os.environ.setdefault("SECURE_COOKIES", "false")
    # Production settings need their own key; any fixed one does for a benchmark.
    os.environ.setdefault("PROBE_KEYS_FERNET_KEY", base64.urlsafe_b64encode(b"b" * 32).decode())
    os.environ["CACHE_URL"] = ""  # locmem: the cache of one process
    # Scoring queued on submission runs in this process, unless a worker is being measured.
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "true" if eager else "false"
    os.environ["MEDIA_ROOT"] = str(media)
    os.environ["DATABASE_URL"] = database_url(database, name)
    os.environ["EMAIL_BACKEND"] = "django.core.mail.backends.locmem.EmailBackend"
    # Connections kept between requests, as a production deployment keeps them (docs/operations.md):
    # opening one per request costs PostgreSQL more than most pages.
    os.environ.setdefault("DATABASE_CONN_MAX_AGE", "600")
    import django

    django.setup()
    if database == "postgres":
        return lambda: subprocess.run([SCRIPT, "stop", str(POSTGRES_PORT)], check=False)
    return lambda: None


def _drop(database: str, name: str, media: Path) -> None:
    """Start from an empty database and media folder."""
    import shutil

    shutil.rmtree(media, ignore_errors=True)
    if database == "sqlite":
        for path in VAR.glob(name + ".sqlite3*"):
            path.unlink()
        return
    url = postgres_url("postgres")
    subprocess.run(["psql", "-q", url, "-c", f"DROP DATABASE IF EXISTS {name}"], check=True)


def build_portfolio(assessments: int) -> None:
    """One organization holding `assessments` assessments; kept when it is already there.

    Four templates are built through the real services (`assessments.factories`): scored and
    approved at launch, scored after remediation, a draft the vendor answers through a link,
    a draft not yet sent. The rest are copies of them, in turn (`bench/portfolio.py`)."""
    import io
    import logging

    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from accounts.models import Organization
    from accounts.roles import Role
    from accounts.services import membership_add, organization_create
    from accounts.tenancy import org_context_for
    from assessments import factories
    from assessments.models import Assessment, Channel
    from assessments.services.reviews import review_record
    from bench.portfolio import copy_assessments

    logging.disable(logging.INFO)
    call_command("migrate", verbosity=0)
    if Organization.objects.filter(name=ORGANIZATION).exists():
        organization = Organization.objects.get(name=ORGANIZATION)
        have = Assessment.objects.filter(organization=organization).count()
        if have == assessments:
            print(f"reusing the portfolio of {have:,} assessments")
            return
        raise SystemExit(f"the database holds {have:,} assessments: run with --rebuild")
    call_command("load_catalog", stdout=io.StringIO())
    organization = organization_create(name=ORGANIZATION, owner_email="owner@bench.test")
    owner = organization.memberships.get().user
    membership_add(organization=organization, email="assessor@bench.test",
                   role=Role.ASSESSOR, actor=owner)  # fmt: skip
    membership_add(organization=organization, email="reviewer@bench.test",
                   role=Role.REVIEWER, actor=owner)  # fmt: skip
    assessor = org_context_for(user=organization.memberships.get(role=Role.ASSESSOR).user,
                               organization_slug=organization.slug)  # fmt: skip
    reviewer = org_context_for(user=organization.memberships.get(role=Role.REVIEWER).user,
                               organization_slug=organization.slug)  # fmt: skip
    started = time.perf_counter()

    def vendor(name: str) -> object:
        return factories.incident_vendor(member=assessor, name=name)

    launch = factories.incident_assessment(member=assessor, vendor=vendor("Launch Inference Co"))
    review_record(
        assessment=launch, member=reviewer, decision="approved_with_conditions",
        conditions="Re-test after the next KV pool change.", acknowledged_findings=factories.critical_rule_ids(launch), channel=Channel.WEB,
    )  # fmt: skip
    templates = [
        Assessment.objects.get(pk=launch.pk),
        factories.incident_assessment(
            member=assessor,
            vendor=vendor("Remediated Inference Co"),
            answers_from=factories.REMEDIATED,
            evidence=factories.logs(factories.REMEDIATED_LOG),
        ),
        factories.incident_assessment(
            member=assessor, vendor=vendor("Linked Inference Co"), through_link=True, submit=False
        ),
        factories.incident_assessment(
            member=assessor, vendor=vendor("Draft Inference Co"), evidence=[], submit=False
        ),
    ]
    print(f"templates through the services: {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()

    def progress(done: int) -> None:
        rate = done / (time.perf_counter() - started)
        print(f"\r  copied {done:,} of {assessments - len(templates):,} ({rate:,.0f}/s)",
              end="", flush=True)  # fmt: skip

    copy_assessments(
        templates,
        copies=assessments - len(templates),
        newest=timezone.now() - timezone.timedelta(hours=1),
        progress=progress,
    )
    print(f"\ncopies: {time.perf_counter() - started:.0f} s")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000
