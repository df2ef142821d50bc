#!/usr/bin/env python
"""Pages and API calls at portfolio scale: one organization with 100,000 assessments.

Builds (once; kept between runs) a database holding one organization whose assessments are
copies of a few incident assessments that the real services built (`assessments.factories`:
scored and approved at launch, scored after remediation, a draft the vendor is answering
through a link, a draft not yet sent), written in bulk by `bench/portfolio.py`. Then it times
every list and detail page and API call through the real WSGI application
(`config.wsgi.application`, every middleware, a signed-in session), each beside the raw SQL
query the page needs (run alone) and a bare Django view through the same application that
signs the user in, runs that query and returns its rows as JSON.

Prints p50 / p95 per call and the ratio of its p95 to the bare view's, and writes them to
artifacts/bench-pages-<database>.json.

Targets (issue 15), on PostgreSQL at 100,000: every page and API call p95 ≤ 150 ms and ≤ 3×
the bare view with its raw query. (The raw query alone takes well under a millisecond for a
page of 50 rows, less than Django's own floor; the ratio to it alone is printed, not judged.)

Usage:
  .venv/bin/python bench/pages.py --database sqlite|postgres [--assessments 100000]
                                  [--requests 30] [--rebuild]
The database is var/avia_bench.sqlite3, or `avia_bench` on the private PostgreSQL cluster of
scripts/postgres.sh (port AVIA_BENCH_POSTGRES_PORT, default 15499, started and stopped here).
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ORGANIZATION, ROOT, build_portfolio, configure, percentiles  # noqa: E402

TARGET_MS = 150
TARGET_RATIO = 3.0


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
    """Seconds per call, after warming up (compiled templates, cached counts, the database's
    own caches). A call slower than 2 s is timed 3 times only: its figure is plain enough."""
    started = time.perf_counter()
    action()
    if time.perf_counter() - started < 2:
        action(), action()
    else:
        requests = 3
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


def raw(sql: str, parameters: list) -> tuple[str, list]:
    return sql, parameters


def run_raw(query: tuple[str, list]) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(*query)
        return cursor.fetchall()


def calls(organization: object) -> list[tuple[str, str, tuple[str, list]]]:
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
        ("dashboard, deep page", "/?page=1000", raw(deep_page, [deep.created_at, org])),
        ("dashboard, filtered", "/?status=approved", raw(newest_page, [org])),
        ("vendor list", "/vendors/", raw(vendor_page, [org])),
        ("vendor list, deep page", "/vendors/?page=200", raw(deep_vendor_page, [deep_vendor.name, org])),
        ("assessment page", f"/assessments/{one.pk}/", raw(one_assessment, [one.pk])),
        ("findings page", f"/assessments/{one.pk}/findings/", raw(one_assessment, [one.pk])),
        ("compare 5 assessments", f"/assessments/compare/?{compare}", raw(five, some)),
        ("new assessment (vendor choice)", "/assessments/new/", raw(vendor_page, [org])),
        ("API assessments", "/api/v1/assessments/", raw(newest_page, [org])),
        ("API assessments, deep (cursor)", f"/api/v1/assessments/?cursor={cursor}",
         raw(deep_page, [deep.created_at, org])),
        ("API assessments, filtered", "/api/v1/assessments/?status=scored&tier=high",
         raw(newest_page, [org])),
        ("API vendors", "/api/v1/vendors/", raw(vendor_page, [org])),
        ("API vendors, deep (cursor)", f"/api/v1/vendors/?cursor={vendor_cursor}",
         raw(deep_vendor_page, [deep_vendor.name, org])),
        ("API assessment", f"/api/v1/assessments/{one.pk}/", raw(one_assessment, [one.pk])),
        ("API audit trail", f"/api/v1/assessments/{one.pk}/audit/", raw(audit, [one.pk])),
    ]  # fmt: skip


def measure(requests: int) -> list[dict]:
    """Each call beside its baseline: a bare Django view, through the same application and
    middleware, that checks the session's user, runs the raw query and returns its rows as
    JSON — the least any page showing those rows must do."""
    from django.contrib.auth.decorators import login_required
    from django.http import HttpResponse, JsonResponse
    from django.urls import clear_url_caches, path

    import config.urls
    from accounts.models import Organization

    organization = Organization.objects.get(name=ORGANIZATION)
    listed = calls(organization)

    @login_required
    def baseline(request: object, index: int) -> JsonResponse:
        rows = run_raw(listed[index][2])
        return JsonResponse({"rows": rows}, json_dumps_params={"default": str})

    config.urls.urlpatterns[:0] = [
        path("bench-bare/", lambda request: HttpResponse("ok")),
        path("bench-baseline/<int:index>/", baseline),
    ]
    clear_url_caches()
    site = Site(organization.memberships.get(role="owner").user)
    assert site.get("/bench-bare/")[0] == 200
    bare = percentiles(timed(lambda: site.get("/bench-bare/"), requests))
    print(f"bare Django view: p50 {bare[0]:.1f} ms, p95 {bare[1]:.1f} ms")
    print("| call | p50 / p95 ms | bytes | raw query p50 / p95 ms "
          "| bare view + raw query p50 / p95 ms | p95 ratio | met |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    rows = []
    for index, (name, url, query) in enumerate(listed):
        status, body = site.get(url)
        if status != 200:
            print(f"| {name} | HTTP {status} | | | | | no |")
            rows.append({"call": name, "url": url, "status": status})
            continue
        assert site.get(f"/bench-baseline/{index}/")[0] == 200
        page = percentiles(timed(lambda url=url: site.get(url), requests))
        alone = percentiles(timed(lambda query=query: run_raw(query), requests))
        base = percentiles(timed(lambda i=index: site.get(f"/bench-baseline/{i}/"), requests))
        ratio = page[1] / base[1]
        met = page[1] <= TARGET_MS and ratio <= TARGET_RATIO
        print(f"| {name} | {page[0]:.0f} / {page[1]:.0f} | {len(body):,} | "
              f"{alone[0]:.1f} / {alone[1]:.1f} | {base[0]:.1f} / {base[1]:.1f} | "
              f"{ratio:.1f} | {'yes' if met else 'NO'} |")  # fmt: skip
        rows.append({"call": name, "url": url, "p50_ms": page[0], "p95_ms": page[1],
                     "bytes": len(body), "raw_p50_ms": alone[0], "raw_p95_ms": alone[1],
                     "baseline_p50_ms": base[0], "baseline_p95_ms": base[1],
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
    stop = configure(args.database, "avia_bench", rebuild=args.rebuild)
    try:
        build_portfolio(args.assessments)
        rows = measure(args.requests)
    finally:
        stop()
    out = ROOT / "artifacts" / f"bench-pages-{args.database}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"assessments": args.assessments, "calls": rows}, indent=1))
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
