#!/usr/bin/env python
"""Pages and API calls at portfolio scale: one organization with 100,000 assessments.

Builds (once; kept between runs) a database holding one organization whose assessments are
copies of a few incident assessments that the real services built (`assessments.factories`:
scored and approved at launch, scored after remediation, a draft the vendor is answering
through a link, a draft not yet sent), written in bulk by `bench/portfolio.py`. Then it times
every list and detail page and API call through the real WSGI application
(`config.wsgi.application`, every middleware, a signed-in session), each beside a bare Django
view through the same application and the raw SQL query the page needs, run by hand.

Prints p50 / p95 per call and the ratio of its p95 to (bare view + raw query) p95, and writes
them to artifacts/bench-pages-<database>.json.

Targets (issue 15), on PostgreSQL at 100,000: every page and API call p95 ≤ 150 ms and ≤ 3×
what the bare view plus its raw query take.

Usage:
  .venv/bin/python bench/pages.py --database sqlite|postgres [--assessments 100000]
                                  [--requests 30] [--rebuild]
PostgreSQL runs on the private cluster of scripts/postgres.sh (port AVIA_BENCH_POSTGRES_PORT,
default 15499), started and stopped by this script.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
VAR = ROOT / "var"
POSTGRES_PORT = int(os.environ.get("AVIA_BENCH_POSTGRES_PORT", "15499"))
ORGANIZATION = "Bench Portfolio Org"
TARGET_MS = 150
TARGET_RATIO = 3.0


def configure(database: str) -> Callable[[], None]:
    """Point Django at the benchmark database; returns what stops what was started."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "true"
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", "bench-pages")
    os.environ.setdefault("ALLOWED_HOSTS", "bench.local")
    os.environ.setdefault("SECURE_COOKIES", "false")
    os.environ["CACHE_URL"] = ""  # locmem: the cache of one process
    os.environ["MEDIA_ROOT"] = str(VAR / f"bench-pages-media-{database}")
    stop = lambda: None  # noqa: E731
    if database == "sqlite":
        os.environ["DATABASE_URL"] = f"sqlite:///{VAR / 'bench-pages.sqlite3'}"
    else:
        script = str(ROOT / "scripts" / "postgres.sh")
        subprocess.run([script, "start", str(POSTGRES_PORT)], check=True)
        url = subprocess.run(
            [script, "url", str(POSTGRES_PORT)], check=True, capture_output=True, text=True
        ).stdout.strip()
        os.environ["DATABASE_URL"] = url.rsplit("/", 1)[0] + "/avia_bench"
        subprocess.run(["psql", "-q", url, "-c", "SELECT 1"], check=True, capture_output=True)
        exists = subprocess.run(
            ["psql", "-tAq", url, "-c", "SELECT 1 FROM pg_database WHERE datname='avia_bench'"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        if not exists:
            subprocess.run(["psql", "-q", url, "-c", "CREATE DATABASE avia_bench"], check=True)

        def stop() -> None:
            subprocess.run([script, "stop", str(POSTGRES_PORT)], check=False)

    import django

    django.setup()
    return stop


# -- the portfolio ---------------------------------------------------------------------------


def build(assessments: int) -> None:
    import io
    import logging

    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from accounts.models import Organization
    from accounts.roles import Role
    from accounts.services import membership_add, organization_create
    from accounts.tenancy import org_context_of
    from assessments import factories, services
    from assessments.models import Assessment, Channel
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
    assessor = org_context_of(user=organization.memberships.get(role=Role.ASSESSOR).user,
                              organization=organization)  # fmt: skip
    reviewer = organization.memberships.get(role=Role.REVIEWER).user
    started = time.perf_counter()
    launch = factories.incident_assessment(member=assessor)
    services.review_record(
        assessment=launch, reviewer=reviewer, decision="approved_with_conditions",
        conditions="Re-test after the next KV pool change.", channel=Channel.WEB,
    )  # fmt: skip
    templates = [
        Assessment.objects.get(pk=launch.pk),
        factories.incident_assessment(
            member=assessor,
            answers_from=factories.REMEDIATED,
            logs=[factories.REMEDIATED_LOG],
        ),
        factories.incident_assessment(member=assessor, through_link=True, submit=False),
        factories.incident_assessment(member=assessor, logs=[], submit=False),
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


# -- timing ----------------------------------------------------------------------------------


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


class Site:
    """Requests through `config.wsgi.application`, signed in as the organization's owner."""

    def __init__(self, user: object) -> None:
        from django.test import Client

        from config.wsgi import application

        client = Client()
        client.force_login(user)
        self.cookie = f"sessionid={client.cookies['sessionid'].value}"
        self.application = application

    def get(self, path: str, query: dict | None = None) -> tuple[int, bytes]:
        from wsgiref.util import setup_testing_defaults

        path, _, given = path.partition("?")
        environ: dict = {}
        setup_testing_defaults(environ)
        environ.update(
            PATH_INFO=path,
            QUERY_STRING=given or urlencode(query or {}),
            HTTP_HOST="bench.local",
            HTTP_COOKIE=self.cookie,
            HTTP_ACCEPT="text/html,application/json",
        )
        status = {}

        def start_response(line: str, headers: list, exc_info: object = None) -> None:
            status["code"] = int(line.split()[0])

        result = self.application(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            getattr(result, "close", lambda: None)()
        return status["code"], body


def timed(action: Callable[[], object], requests: int) -> list[float]:
    for _ in range(3):
        action()  # warm: compiled templates, cached counts, the database's own caches
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


def raw(sql: str, parameters: list) -> Callable[[], None]:
    from django.db import connection

    def run() -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql, parameters)
            cursor.fetchall()

    return run


def calls(organization: object) -> list[tuple[str, str, Callable[[], None]]]:
    """(name, path, the raw query it needs) for every list and detail page and API call."""
    from assessments.models import Assessment, Vendor

    org = organization.pk
    assessments = Assessment.objects.filter(organization=organization)
    scored = assessments.filter(latest_run__isnull=False).order_by("-created_at")
    one = scored.first()
    some = list(scored.values_list("pk", flat=True)[:5])
    deep = assessments.order_by("-created_at", "-id")[assessments.count() // 2]
    deep_vendor = Vendor.objects.filter(organization=organization).order_by("name")[
        Vendor.objects.filter(organization=organization).count() // 2
    ]
    cursor = base64.b64encode(urlencode({"p": str(deep.created_at)}).encode()).decode()
    vendor_cursor = base64.b64encode(urlencode({"p": deep_vendor.name}).encode()).decode()
    newest_page = (
        "SELECT a.*, v.name FROM assessments_assessment a JOIN assessments_vendor v "
        "ON v.id = a.vendor_id WHERE a.organization_id = %s "
        "ORDER BY a.created_at DESC, a.id DESC LIMIT 50"
    )
    deep_page = newest_page.replace("WHERE", "WHERE a.created_at < %s AND")
    vendor_page = (
        "SELECT v.* FROM assessments_vendor v WHERE v.organization_id = %s ORDER BY v.name LIMIT 50"
    )
    deep_vendor_page = vendor_page.replace("WHERE", "WHERE v.name > %s AND")
    one_assessment = (
        "SELECT a.*, f.* FROM assessments_assessment a LEFT JOIN assessments_finding f "
        "ON f.run_id = a.latest_run_id WHERE a.id = %s ORDER BY f.position"
    )
    five = (
        "SELECT a.id, r.sections, f.rule_id, f.severity FROM assessments_assessment a "
        "JOIN assessments_scoringrun r ON r.id = a.latest_run_id LEFT JOIN assessments_finding f "
        "ON f.run_id = r.id WHERE a.id IN (%s, %s, %s, %s, %s)"
    )
    audit = (
        "SELECT e.* FROM assessments_auditevent e WHERE e.assessment_id = %s "
        "ORDER BY e.created_at DESC, e.id DESC LIMIT 50"
    )
    compare = "&".join(f"assessments={pk}" for pk in some)
    return [
        ("dashboard", "/", raw(newest_page, [org])),
        ("dashboard, deep page", "/?page=1000", raw(deep_page, [org, deep.created_at])),
        ("dashboard, filtered", "/?status=approved", raw(newest_page, [org])),
        ("vendor list", "/vendors/", raw(vendor_page, [org])),
        ("vendor list, deep page", "/vendors/?page=200", raw(deep_vendor_page, [org, deep_vendor.name])),
        ("assessment page", f"/assessments/{one.pk}/", raw(one_assessment, [one.pk])),
        ("findings page", f"/assessments/{one.pk}/findings/", raw(one_assessment, [one.pk])),
        ("compare 5 assessments", f"/assessments/compare/?{compare}", raw(five, some)),
        ("API assessments", "/api/v1/assessments/", raw(newest_page, [org])),
        ("API assessments, deep (cursor)", f"/api/v1/assessments/?cursor={cursor}",
         raw(deep_page, [org, deep.created_at])),
        ("API assessments, filtered", "/api/v1/assessments/?status=scored&tier=high",
         raw(newest_page, [org])),
        ("API vendors", "/api/v1/vendors/", raw(vendor_page, [org])),
        ("API vendors, deep (cursor)", f"/api/v1/vendors/?cursor={vendor_cursor}",
         raw(deep_vendor_page, [org, deep_vendor.name])),
        ("API assessment", f"/api/v1/assessments/{one.pk}/", raw(one_assessment, [one.pk])),
        ("API audit trail", f"/api/v1/assessments/{one.pk}/audit/", raw(audit, [one.pk])),
    ]  # fmt: skip


def measure(requests: int) -> list[dict]:
    from django.http import HttpResponse
    from django.urls import clear_url_caches, path

    import config.urls
    from accounts.models import Organization

    # The bare view: the same application and middleware, a view that does nothing.
    config.urls.urlpatterns.insert(0, path("bench-bare/", lambda request: HttpResponse("ok")))
    clear_url_caches()
    organization = Organization.objects.get(name=ORGANIZATION)
    site = Site(organization.memberships.get(role="owner").user)
    status, _body = site.get("/bench-bare/")
    assert status == 200, status
    bare = percentiles(timed(lambda: site.get("/bench-bare/"), requests))
    print(f"bare Django view: p50 {bare[0]:.1f} ms, p95 {bare[1]:.1f} ms")
    print("| call | p50 / p95 ms | bytes | raw query p50 / p95 ms | p95 ÷ (bare + raw) | met |")
    print("|---|---|---|---|---|---|")
    rows = []
    for name, url, raw_query in calls(organization):
        status, body = site.get(url)
        if status != 200:
            print(f"| {name} | HTTP {status} | | | | no |")
            rows.append({"call": name, "url": url, "status": status})
            continue
        page = percentiles(timed(lambda url=url: site.get(url), requests))
        query = percentiles(timed(raw_query, requests))
        ratio = page[1] / (bare[1] + query[1])
        met = page[1] <= TARGET_MS and ratio <= TARGET_RATIO
        print(f"| {name} | {page[0]:.0f} / {page[1]:.0f} | {len(body):,} | "
              f"{query[0]:.1f} / {query[1]:.1f} | {ratio:.1f} | {'yes' if met else 'NO'} |")  # fmt: skip
        rows.append({"call": name, "url": url, "p50_ms": page[0], "p95_ms": page[1],
                     "bytes": len(body), "raw_p50_ms": query[0], "raw_p95_ms": query[1],
                     "ratio": ratio, "met": met})  # fmt: skip
    rows.append({"call": "bare view", "p50_ms": bare[0], "p95_ms": bare[1]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--assessments", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    VAR.mkdir(exist_ok=True)
    if args.rebuild:
        rebuild(args.database)
    stop = configure(args.database)
    try:
        build(args.assessments)
        rows = measure(args.requests)
    finally:
        stop()
    out = ROOT / "artifacts" / f"bench-pages-{args.database}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"assessments": args.assessments, "calls": rows}, indent=1))
    print(f"written to {out.relative_to(ROOT)}")


def rebuild(database: str) -> None:
    """Start from an empty database (and media folder)."""
    import shutil

    shutil.rmtree(VAR / f"bench-pages-media-{database}", ignore_errors=True)
    if database == "sqlite":
        for path in VAR.glob("bench-pages.sqlite3*"):
            path.unlink()
        return
    script = str(ROOT / "scripts" / "postgres.sh")
    subprocess.run([script, "start", str(POSTGRES_PORT)], check=True)
    url = subprocess.run([script, "url", str(POSTGRES_PORT)], check=True, capture_output=True,
                         text=True).stdout.strip()  # fmt: skip
    subprocess.run(["psql", "-q", url, "-c", "DROP DATABASE IF EXISTS avia_bench"], check=True)


if __name__ == "__main__":
    tempfile.tempdir = str(VAR)
    main()
