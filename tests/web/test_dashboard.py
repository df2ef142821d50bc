"""The dashboard: assessments by status and tier, overdue first, filters, search by vendor."""

import datetime as dt

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessments.models import Assessment

from .conftest import make_draft, make_scored, make_vendor

DASHBOARD = reverse("assessments:dashboard")


def vendors_listed(response) -> list[str]:
    return [a.vendor.name for a in response.context["page"]]


@pytest.fixture
def mixed(catalog, personas, settings):
    """Three drafts (one overdue) and one scored assessment, each of its own vendor."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    later = make_draft(
        personas, make_vendor(personas, "Later Due Ltd"), due_date=dt.date(2031, 1, 1)
    )
    soon = make_draft(personas, make_vendor(personas, "Soon Due Ltd"), due_date=dt.date(2030, 1, 1))
    overdue = make_draft(
        personas, make_vendor(personas, "Overdue AI"), due_date=dt.date(2030, 1, 1)
    )
    Assessment.objects.filter(pk=overdue.pk).update(due_date=dt.date(2020, 1, 1))
    scored = make_scored(personas, make_vendor(personas, "Scored Inference"))
    return {"later": later, "soon": soon, "overdue": overdue, "scored": scored}


def test_it_lists_overdue_assessments_first_then_by_due_date(client, personas, mixed):
    client.force_login(personas.vic)
    response = client.get(DASHBOARD)
    assert response.status_code == 200
    assert vendors_listed(response) == [
        "Overdue AI",  # due 2020-01-01, still open
        "Soon Due Ltd",  # 2030-01-01
        "Scored Inference",  # 2030-09-30, waiting for sign-off
        "Later Due Ltd",  # 2031-01-01
    ]
    body = response.content.decode()
    assert 'class="overdue"' in body and "overdue" in body


def test_it_counts_assessments_by_status_and_tier(client, personas, mixed):
    client.force_login(personas.vic)
    response = client.get(DASHBOARD)
    statuses = {item["value"]: item["count"] for item in response.context["status_counts"]}
    tiers = {item["value"]: item["count"] for item in response.context["tier_counts"]}
    assert statuses["draft"] == 3 and statuses["scored"] == 1
    assert tiers == {"critical": 1, "high": 0, "medium": 0, "low": 0}
    assert response.context["overdue_count"] == 1


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"q": "due"}, {"Overdue AI", "Soon Due Ltd", "Later Due Ltd"}),
        ({"q": "SCORED"}, {"Scored Inference"}),
        ({"status": "scored"}, {"Scored Inference"}),
        ({"tier": "critical"}, {"Scored Inference"}),
        ({"tier": "unscored"}, {"Overdue AI", "Soon Due Ltd", "Later Due Ltd"}),
        ({"overdue": "on"}, {"Overdue AI"}),
        ({"status": "draft", "q": "soon"}, {"Soon Due Ltd"}),
    ],
)
def test_it_filters_and_searches_by_vendor_name(client, personas, mixed, query, expected):
    client.force_login(personas.ava)
    response = client.get(DASHBOARD, query)
    assert response.status_code == 200
    assert set(vendors_listed(response)) == expected


@pytest.mark.parametrize(
    "query",
    [
        {"status": "nonsense"},
        {"tier": "<script>"},
        {"page": "abc"},
        {"page": "999"},
        {"q": "x" * 500},
        {"overdue": "maybe"},
    ],
)
def test_odd_parameters_never_break_the_page(client, personas, mixed, query):
    client.force_login(personas.ava)
    response = client.get(DASHBOARD, query)
    assert response.status_code == 200
    assert "<script>" not in response.content.decode().split("<main", 1)[1].split("</main>")[0]


def test_an_htmx_filter_gets_the_same_page_for_htmx_to_pick_the_results_from(
    client, personas, mixed
):
    client.force_login(personas.ava)
    response = client.get(DASHBOARD, {"status": "scored"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert 'id="results"' in response.content.decode()
    assert vendors_listed(response) == ["Scored Inference"]


def test_it_shows_the_create_button_only_to_those_who_may_create(client, personas, mixed):
    create = reverse("assessments:create")
    client.force_login(personas.ava)
    assert create in client.get(DASHBOARD).content.decode()
    client.force_login(personas.vic)
    assert f'href="{create}"' not in client.get(DASHBOARD).content.decode()


def test_dates_and_counts_follow_the_language(client, personas, mixed):
    client.force_login(personas.vic)
    client.cookies["django_language"] = "zh-hant"
    body = client.get(DASHBOARD).content.decode()
    assert "2030年1月1日" in body
    assert 'lang="zh-Hant-HK"' in body


def dashboard_queries(client) -> int:
    # Counts are cached until the assessments change: measured cold, every count is taken.
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(DASHBOARD)
    assert response.status_code == 200
    return len(captured.captured_queries)


def test_the_dashboard_runs_as_many_queries_for_50_assessments_as_for_5(
    client, personas, catalog, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    client.force_login(personas.ava)

    def add(count: int, start: int) -> None:
        for index in range(start, start + count):
            vendor = make_vendor(personas, f"Vendor {index:02d}")
            if index % 3 == 0:
                make_scored(personas, vendor, log=False)
            else:
                make_draft(personas, vendor, due_date=dt.date(2030, 1, 1 + index % 28))

    add(5, 0)
    five = dashboard_queries(client)
    add(45, 5)
    assert Assessment.objects.count() == 50
    fifty = dashboard_queries(client)
    assert fifty == five
    # and with a filter and a later page: a search by name also reads the vendors' version
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        client.get(DASHBOARD, {"q": "Vendor", "page": 2})
    assert len(captured.captured_queries) == five + 1


def test_a_search_by_vendor_name_follows_a_rename(client, personas, mixed):
    """The stages' counts are cached per data version: a rename changes what a search by name
    finds without touching an assessment, so it must move the version too."""
    client.force_login(personas.ava)
    before = client.get(DASHBOARD, {"q": "due"})
    assert before.context["page"].paginator.count == 3
    later = mixed["later"].vendor
    edit = reverse("assessments:vendor_edit", args=[later.pk])
    assert client.post(edit, {"name": "Later Ltd"}).status_code == 302

    after = client.get(DASHBOARD, {"q": "due"})

    assert set(vendors_listed(after)) == {"Overdue AI", "Soon Due Ltd"}
    assert after.context["page"].paginator.count == 2
    assert "Showing 1–2 of 2" in after.content.decode()
