"""Every query of the hot pages and API calls reaches the big tables through an index, on
PostgreSQL with a portfolio large enough that the planner would rather scan when it can.

The queries are the ones the endpoints really send (captured), each run through EXPLAIN.
"""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessments.models import Assessment
from assessments.selectors import (
    UrgencyOrdered,
    assessments_changed_at,
    assessments_for,
    vendor_assessment_counts,
    vendors_for,
)
from bench.portfolio import copy_assessments

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="query plans are PostgreSQL's: these run in make test's PostgreSQL pass",
)

COPIES = 3000
# Tables that grow with the portfolio: never read whole.
BIG_TABLES = {
    "assessments_assessment",
    "assessments_vendor",
    "assessments_answer",
    "assessments_answerrevision",
    "assessments_scoringrun",
    "assessments_finding",
    "assessments_auditevent",
    "assessments_evidencefile",
}


def plan_nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from plan_nodes(child)


def scans_of(sql):
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        (document,) = cursor.fetchone()
    plan = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    return [
        (node["Node Type"], node.get("Relation Name"), node.get("Index Name"))
        for node in plan_nodes(plan)
        if "Scan" in node["Node Type"]
    ]


def test_the_hot_queries_use_indexes(template, personas, client):
    copy_assessments([template], copies=COPIES, assessments_per_vendor=1, newest=timezone.now())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    client.force_login(personas.alice)
    middle = Assessment.objects.order_by("-created_at")[COPIES // 2]
    deep = client.get("/api/v1/assessments/", {"page": COPIES // 100}).json()["results"][0]
    cursor_link = client.get("/api/v1/assessments/").json()["next"]
    urls = [
        "/api/v1/assessments/",
        cursor_link,
        f"/api/v1/assessments/?status=approved&vendor={middle.vendor_id}",
        "/api/v1/vendors/",
        f"/api/v1/assessments/{deep['id']}/",
        f"/api/v1/assessments/{middle.pk}/audit/",
    ]

    # The dashboard's reads (its view is being rebuilt elsewhere; these are what it calls).
    ordered = UrgencyOrdered(
        assessments_for(organization=personas.acme),
        today=timezone.localdate(),
        version=assessments_changed_at(organization=personas.acme),
    )
    some_vendors = list(vendors_for(organization=personas.acme).order_by("name")[:50])
    reads = {
        "dashboard, first page": lambda: ordered[0:25],
        "dashboard, deep page": lambda: ordered[COPIES // 2 : COPIES // 2 + 25],
        "vendor counts": lambda: vendor_assessment_counts(
            organization=personas.acme, vendors=some_vendors
        ),
    }
    calls = [(url, lambda url=url: client.get(url).status_code == 200) for url in urls]
    calls += [(name, lambda read=read: read() is not None) for name, read in reads.items()]

    unindexed, indexes_used = {}, set()
    for url, call in calls:
        with CaptureQueriesContext(connection) as captured:
            assert call(), url
        for query in captured.captured_queries:
            sql = query["sql"]
            # Counts are cached (tests/api/test_pagination.py): one of them may read every
            # row of the organization, once per change of its data.
            if not sql.lstrip().upper().startswith("SELECT") or "COUNT(*)" in sql.upper():
                continue
            scans = scans_of(sql)
            indexes_used |= {s[2] for s in scans if s[2]}
            # The table the query reads its rows from: never scanned whole. (A small table
            # joined to a page of rows may be: hashing it can beat a lookup per row.)
            reading = re.search(r'\bFROM "(\w+)"', sql).group(1)
            sequential = [
                s for s in scans if s[0] == "Seq Scan" and s[1] == reading and s[1] in BIG_TABLES
            ]
            if sequential:
                unindexed.setdefault(url, []).append((sql[:300], scans))

    assert not unindexed, json.dumps(unindexed, indent=1)
    # The lists seek through their own indexes (newest first; the count's version).
    assert {
        "assessment_org_newest",
        "assessment_org_changed",
        "assessment_org_due",
        "vendor_org_changed",
    } <= indexes_used, indexes_used
