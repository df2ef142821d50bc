"""Every table of the member pages and the vendor portal has a name (a caption, or
aria-labelledby naming its heading), so a screen reader's list of tables says what each holds:
the pages of tests/site_pages.py, with a probe run, an API token and a rescore batch to show."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from assessments.models import Channel
from portfolio.services import rescore_batch_create
from tests.html_elements import Elements
from tests.personas import member_of
from tests.site_pages import (
    build_probe_world,
    build_world,
    member_pages,
    portal_pages,
    probe_pages,
)

pytestmark = pytest.mark.django_db


def unnamed_tables(html: str) -> list[str]:
    page = Elements()
    page.feed(html)
    tables = [e for e in page.all if e["tag"] == "table"]
    captions = {id(e["parent"]) for e in page.all if e["tag"] == "caption"}
    return [
        " ".join(e["text"].split())[:60]
        for e in tables
        if id(e) not in captions
        and not e["attrs"].get("aria-labelledby")
        and not e["attrs"].get("aria-label")
    ]


def test_the_checker_finds_a_table_without_a_name():
    assert unnamed_tables("<table><tr><th>A</th></tr></table>") == ["A"]
    assert unnamed_tables("<table><caption>C</caption><tr><th>A</th></tr></table>") == []
    assert unnamed_tables('<table aria-labelledby="h"><tr><th>A</th></tr></table>') == []


def test_every_table_has_a_name(catalog, personas, settings, launch_day_vendor):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.PROBE_RATE_PER_KEY = 100
    world = build_world(personas)
    probe_world = build_probe_world(personas, launch_day_vendor.base_url)
    rescore_batch_create(
        member=member_of(personas.ava), ruleset_key="incident-2026-kv@1", channel=Channel.WEB
    )
    member, portal = probe_pages(probe_world)
    owner = Client()
    owner.force_login(personas.alice)
    found = []
    for url in [*member_pages(world, personas), *member, reverse("portfolio:rescore")]:
        response = owner.get(url)
        assert response.status_code == 200, url
        found += [f"{url}: {table}" for table in unnamed_tables(response.content.decode())]
    vendor = Client()
    for url in [*portal_pages(world), *portal]:
        response = vendor.get(url)
        assert response.status_code == 200, url
        found += [f"{url}: {table}" for table in unnamed_tables(response.content.decode())]
    assert found == [], "\n".join(found)
