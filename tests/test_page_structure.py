"""The structure screen readers rely on, on every member page and every page of the vendor
portal (tests/site_pages.py, with a probe run, an API token and a rescore batch to show): each
table has a name (a caption, or aria-labelledby naming its heading), so a list of tables says
what each holds; no id is used twice, so every label, description and link finds its element
(WCAG 2.1 4.1.1). And every POST form of a member page carries the organization the page was
drawn for (`{% form_guard %}`, accounts.tenancy), so a new form cannot forget it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.tenancy import PAGE_ORGANIZATION_FIELD
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


def site_pages(
    personas, settings, launch_day_vendor, *, members_only: bool = False
) -> list[tuple[str, str]]:
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
    vendor = Client()
    pages = []
    for client, urls in (
        (owner, [*member_pages(world, personas), *member, reverse("portfolio:rescore")]),
        (vendor, [] if members_only else [*portal_pages(world), *portal]),
    ):
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            pages.append((url, response.content.decode()))
    return pages


def duplicate_ids(html: str) -> list[str]:
    page = Elements()
    page.feed(html)
    ids = [e["attrs"]["id"] for e in page.all if e["attrs"].get("id")]
    return sorted({i for i in ids if ids.count(i) > 1})


def test_every_table_has_a_name(catalog, personas, settings, launch_day_vendor):
    found = [
        f"{url}: {table}"
        for url, html in site_pages(personas, settings, launch_day_vendor)
        for table in unnamed_tables(html)
    ]
    assert found == [], "\n".join(found)


def test_no_id_is_used_twice(catalog, personas, settings, launch_day_vendor):
    assert duplicate_ids('<p id="a"></p><svg><title id="a"></title></svg>') == ["a"]
    found = [
        f"{url}: {twice}"
        for url, html in site_pages(personas, settings, launch_day_vendor)
        for twice in duplicate_ids(html)
    ]
    assert found == [], "\n".join(found)


def unguarded_forms(html: str) -> list[str]:
    """The POST forms of a page without the organization field, by their action."""
    page = Elements()
    page.feed(html)
    forms = [
        e for e in page.all if e["tag"] == "form" and e["attrs"].get("method", "").lower() == "post"
    ]
    guarded = set()
    for element in page.all:
        if element["tag"] == "input" and element["attrs"].get("name") == PAGE_ORGANIZATION_FIELD:
            parent = element["parent"]
            while parent is not None and parent["tag"] != "form":
                parent = parent["parent"]
            if parent is not None and element["attrs"].get("value"):
                guarded.add(id(parent))
    return [
        f.get("attrs", {}).get("action") or "(this page)" for f in forms if id(f) not in guarded
    ]


def test_the_checker_finds_a_post_form_without_the_organization():
    assert unguarded_forms('<form method="post" action="/x/"><input name="a"></form>') == ["/x/"]
    assert unguarded_forms('<form method="get"><input name="q"></form>') == []
    guarded = (
        f'<form method="post"><div><input name="{PAGE_ORGANIZATION_FIELD}" value="7"></div></form>'
    )
    assert unguarded_forms(guarded) == []


def test_every_post_form_of_a_member_page_carries_its_organization(
    catalog, personas, settings, launch_day_vendor
):
    pages = site_pages(personas, settings, launch_day_vendor, members_only=True)
    found = [f"{url}: {form}" for url, html in pages for form in unguarded_forms(html)]
    assert found == [], "\n".join(found)
    # The page's htmx requests carry it too.
    owner_organization = str(personas.acme.pk)
    assert all(f'"X-Page-Organization": "{owner_organization}"' in html for _url, html in pages)
