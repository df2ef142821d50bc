"""Typed answers are never lost — in real Chromium, with JavaScript (htmx keeps drafts as the
reader types) and without it (every button of the page keeps them first).

The vendor types in a section, follows a link to another section and back, presses Upload
with no file chosen, reloads, and closes the tab and opens the link again: every typed value is
still there, marked as a draft. The same for a member editing the buyer's section.
"""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from assessments.models import Answer, Channel
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import member_of
from tests.web.conftest import make_draft

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
RUNS = [pytest.param(True, id="htmx"), pytest.param(False, id="no-javascript")]
DRAFT = "Draft, not saved yet"


@pytest.fixture
def browser(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # still plain synchronous calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def assessment(catalog, personas):
    return make_draft(personas)


def new_page(browser, live_server, path, *, javascript, cookies=()):
    context = browser.new_context(java_script_enabled=javascript)
    context.add_cookies(list(cookies))
    page = context.new_page()
    page.goto(live_server.url + path)
    if javascript:
        # A function, not a string: Playwright evals a string predicate in the page, which the
        # content security policy forbids.
        page.wait_for_function("() => window.htmx !== undefined")
    return page


def wait_for_autosave(page):
    page.wait_for_function(
        "() => document.querySelector('#draft-status').textContent.includes('Kept as a draft')"
    )


@pytest.mark.parametrize("javascript", RUNS)
def test_a_vendors_typed_answers_survive_links_uploads_reloads_and_a_closed_tab(
    transactional_db, live_server, browser, assessment, personas, javascript
):
    _link, token = vendor_link_issue(
        assessment=assessment,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    section = reverse("portal:section", args=[token, "CTX"])
    page = new_page(browser, live_server, section, javascript=javascript)
    typed = {"#q-CTX-01": "1M", "#q-CTX-02": "681,280", "#q-comment-CTX-02": "from the log"}
    for selector, value in typed.items():
        page.fill(selector, value)
    page.check("#q-CTX-04-manual_at_launch")

    def everything_is_still_there():
        for selector, value in typed.items():
            assert page.input_value(selector) == value, selector
        assert page.is_checked("#q-CTX-04-manual_at_launch")
        assert DRAFT in page.locator("#question-CTX-01").inner_text()
        assert "Enter a whole number" in page.locator("#question-CTX-01").inner_text()

    # A link to another section, and back.
    page.click("nav.pager button:has-text('KV')")
    page.wait_for_url(f"**{reverse('portal:section', args=[token, 'KV'])}")
    page.click("nav.pager button:has-text('CTX')")
    page.wait_for_url(f"**{section}")
    everything_is_still_there()
    # Upload with no file chosen: refused, and nothing typed is lost.
    page.click("#q-CTX-08-upload")
    assert "Choose a file to upload." in page.locator(".error-summary").inner_text()
    everything_is_still_there()
    # A reload.
    page.goto(live_server.url + section)
    everything_is_still_there()
    if javascript:  # typed and left at once: htmx has kept it as it was typed
        page.fill("#q-comment-CTX-01", "typed just before closing")
        wait_for_autosave(page)
        typed["#q-comment-CTX-01"] = "typed just before closing"
    # The tab is closed; the link opened again.
    page.context.close()
    page = new_page(browser, live_server, section, javascript=javascript)
    everything_is_still_there()
    # Drafts are not answers: nothing was saved, so nothing could be submitted or scored.
    assert not Answer.objects.filter(
        assessment=assessment, question_code__startswith="CTX"
    ).exists()
    # "Save" checks them: CTX-01 is refused, beside its question, and still nothing is saved.
    page.click("#section-form button.primary")
    assert "CTX-01:" in page.locator(".error-summary").inner_text()
    assert not Answer.objects.filter(
        assessment=assessment, question_code__startswith="CTX"
    ).exists()
    page.fill("#q-CTX-01", "1,048,576")
    page.click("#section-form button.primary")
    assert "Saved." in page.content()
    assert DRAFT not in page.locator("#questions").inner_text()
    saved = dict(
        Answer.objects.filter(assessment=assessment, question_code__startswith="CTX").values_list(
            "question_code", "value"
        )
    )
    assert saved == {"CTX-01": 1048576, "CTX-02": 681280, "CTX-04": "manual_at_launch"}
    page.context.close()


def session_cookie(user, live_server):
    client = Client()
    client.force_login(user)
    return {
        "name": settings.SESSION_COOKIE_NAME,
        "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "url": live_server.url,
    }


@pytest.mark.parametrize("javascript", RUNS)
def test_a_members_typed_buyer_answers_survive_links_reloads_and_a_closed_tab(
    transactional_db, live_server, browser, assessment, personas, javascript
):
    cookie = session_cookie(personas.ava, live_server)
    edit = reverse("assessments:edit", args=[assessment.pk])
    page = new_page(browser, live_server, edit, javascript=javascript, cookies=[cookie])
    typed = {"#q-USE-03": "about 1M", "#q-comment-USE-03": "loan bundles, typed"}
    for selector, value in typed.items():
        page.fill(selector, value)

    def everything_is_still_there():
        for selector, value in typed.items():
            assert page.input_value(selector) == value, selector
        assert DRAFT in page.locator("#question-USE-03").inner_text()

    # Back to the assessment's page (the link saves drafts first), and to the edit page again.
    page.click("button:has-text('Back to the assessment')")
    page.wait_for_url(f"**{reverse('assessments:detail', args=[assessment.pk])}")
    page.goto(live_server.url + edit)
    everything_is_still_there()
    page.reload()
    everything_is_still_there()
    if javascript:
        page.fill("#q-comment-USE-01", "typed just before closing")
        wait_for_autosave(page)
        typed["#q-comment-USE-01"] = "typed just before closing"
    page.context.close()
    page = new_page(browser, live_server, edit, javascript=javascript, cookies=[cookie])
    everything_is_still_there()
    assert Answer.objects.get(assessment=assessment, question_code="USE-03").value == 750000
    page.context.close()
