"""The cache in a real Redis (CACHE_URL, as in production), and that Redis stopped: every page
and every list still answers, from the database (issue 28, break 2: six list pages and the
sign-in page answered 500 because a cached count did not survive the cache being away)."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from accounts.services import api_token_create
from scoring.registry import builtin_catalog
from scoring.services import catalog_load
from tests.personas import PASSWORD, make_personas
from tests.site_pages import build_world, member_pages, portal_pages, visitor_pages

API_LISTS = [
    "/api/v1/assessments/",
    "/api/v1/vendors/",
    "/api/v1/assessments/?page=1",
    "/api/v1/vendors/?page=1",
]


@pytest.mark.integration
@pytest.mark.django_db
def test_every_page_and_list_answers_with_the_cache_down(redis_server, redis_cache):
    catalog_load(catalog=builtin_catalog())
    personas = make_personas()
    world = build_world(personas)
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="outage")
    member = Client(raise_request_exception=False)
    member.force_login(personas.alice)
    api = APIClient(raise_request_exception=False)
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    pages = member_pages(world, personas)
    assert member.get(pages[0]).status_code == 200  # the counts are cached now

    redis_server.stop()

    failures = []
    for page in pages:
        status = member.get(page).status_code
        if status >= 500:
            failures.append((page, status))
    for page in [*portal_pages(world), *visitor_pages()]:
        status = Client(raise_request_exception=False).get(page).status_code
        if status >= 500:
            failures.append((page, status))
    for url in API_LISTS:
        status = api.get(url).status_code
        if status != 200:
            failures.append((url, status))
    signed_in = Client(raise_request_exception=False).post(
        "/accounts/login/", {"username": "ava@acme.test", "password": PASSWORD}
    )
    if signed_in.status_code != 302:
        failures.append(("sign in", signed_in.status_code))
    wrong = Client(raise_request_exception=False).post(
        "/accounts/login/", {"username": "ava@acme.test", "password": "nope"}
    )
    if wrong.status_code >= 500:
        failures.append(("sign in, wrong password", wrong.status_code))
    assert not failures, "; ".join(f"{page}: {status}" for page, status in failures)
