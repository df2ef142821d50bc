"""A strict content security policy, and pages that live within it.

Every response carries `default-src 'self'` and `frame-ancestors 'none'`, with no
'unsafe-inline' or 'unsafe-eval' anywhere; and every page a person can reach — each persona's
member pages, the vendor portal in both languages, the sign-in page, the error pages, the API
docs — holds no inline script (a <script> without src), no <style> element and no style
attribute, which that policy would block. (The browser tests check the same pages in Chromium
and fail on any violation it reports.)
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.test import Client, RequestFactory
from django.urls import reverse
from django.views.defaults import server_error

from tests.site_pages import member_pages, portal_pages, visitor_pages

pytestmark = pytest.mark.django_db


class InlineCode(HTMLParser):
    """Collects what a strict policy blocks: inline scripts, style elements, style attributes
    and inline event handlers (onclick=…)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _value in attrs}
        if tag == "script" and "src" not in names:
            self.found.append(f"<script> without src ({self.getpos()})")
        if tag == "style":
            self.found.append(f"<style> element ({self.getpos()})")
        if "style" in names:
            self.found.append(f"style attribute on <{tag}> ({self.getpos()})")
        self.found += [f"{name} handler on <{tag}>" for name in names if name.startswith("on")]

    handle_startendtag = handle_starttag


def inline_code(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    return parser.found


def test_the_checker_finds_what_the_policy_would_block():
    html = (
        '<script>alert(1)</script><script src="/static/a.js"></script><style>p{}</style>'
        '<p style="color: red">x</p><svg><rect style="fill: red"/></svg><a onclick="x()">y</a>'
    )
    assert len(inline_code(html)) == 5


def test_every_response_carries_the_strict_policy(client):
    policy = client.get(reverse("accounts:login"))["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "script-src" not in directives and "style-src" not in directives  # default-src rules


def assert_within_policy(response, url: str) -> None:
    assert "Content-Security-Policy" in response, url
    assert inline_code(response.content.decode()) == [], url


@pytest.mark.parametrize("role", ["owner", "assessor", "reviewer", "viewer"])
def test_every_member_page_of_every_persona_needs_no_inline_code(world, personas, role):
    client = Client()
    client.force_login(personas.acme_members[role])
    seen = 0
    for url in member_pages(world, personas):
        response = client.get(url)
        assert response.status_code in (200, 403), url  # a 403 is a page too (its own layout)
        assert_within_policy(response, url)
        seen += 1
    assert seen >= 20


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_every_page_of_the_vendor_portal_needs_no_inline_code(world, client, language):
    link = world.draft.vendor_links.get()
    session = client.session
    session[f"portal:language:{link.pk}"] = language
    session.save()
    for url in portal_pages(world):
        assert_within_policy(client.get(url), url)
    refused = client.post(reverse("portal:section", args=[world.token, "CTX"]), {"CTX-01": "1M"})
    assert refused.status_code == 400
    assert_within_policy(refused, "section with errors")
    assert_within_policy(client.get(reverse("portal:landing", args=["no-such-link"])), "bad link")


def test_sign_in_error_pages_and_api_docs_need_no_inline_code(world, personas, client):
    for url in visitor_pages():
        assert_within_policy(client.get(url), url)
    refused = client.post(reverse("accounts:login"), {"username": "x@y.test", "password": "no"})
    assert_within_policy(refused, "sign in refused")
    client.force_login(personas.vic)
    not_found = client.get("/assessments/999999/")
    assert not_found.status_code == 404
    assert_within_policy(not_found, "404")
    forbidden = client.get(reverse("accounts:members", args=[personas.acme.slug]))
    assert forbidden.status_code == 403
    assert_within_policy(forbidden, "403")
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert_within_policy(docs, "API docs")
    broken = server_error(RequestFactory().get("/"))
    assert broken.status_code == 500
    assert inline_code(broken.content.decode()) == []


def test_error_pages_are_in_the_layout_with_a_way_back_in_both_languages(personas, client):
    client.force_login(personas.vic)
    for language, title, other in (
        ("en", "Page not found", "找不到頁面"),
        ("zh-hant", "找不到頁面", "Page not found"),
    ):
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        page = client.get("/assessments/999999/").content.decode()
        assert f"<h1>{title}</h1>" in page and other in page
        assert 'class="site-header"' in page  # the layout, with its navigation
        assert f'href="{reverse("assessments:dashboard")}"' in page  # the way back
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    forbidden = client.get(reverse("accounts:members", args=[personas.acme.slug]))
    assert "You cannot do this" in forbidden.content.decode()
    assert "你不能執行此操作" in forbidden.content.decode()
