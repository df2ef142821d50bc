"""A clarification thread in real Chromium, in English and Traditional Chinese: an assessor asks
about an answer from the assessment page, the vendor answers in the portal (reaching the thread
from the question's section), the assessor reads the answer and resolves the thread."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from assessments.models import Thread
from tests.personas import make_personas

from .conftest import DESKTOP, open_assessment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CODE = "KV-01"
RESOLVED = {"en": "This thread is resolved.", "zh-hant": "此提問討論已解決。"}
ASK_LINK = {"en": "Ask the vendor about this answer", "zh-hant": "就此答案向供應商提問"}


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def personas(transactional_db):
    return make_personas()


def member_cookies(live_server, user, language: str) -> list[dict]:
    client = Client()
    client.force_login(user)
    return [
        {
            "name": settings.SESSION_COOKIE_NAME,
            "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
            "url": live_server.url,
        },
        {"name": settings.LANGUAGE_COOKIE_NAME, "value": language, "url": live_server.url},
    ]


def watched(context) -> tuple[object, list[str]]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_an_assessor_asks_the_vendor_answers_and_the_assessor_resolves(
    catalog, personas, live_server, chromium, language
):
    assessment, token = open_assessment(personas, language)
    question = f"[{language}] Which memory fraction does production run?"
    answer = f"[{language}] 0.85, as the startup log shows."

    # The assessor asks, from the question's row on the assessment page.
    member = chromium.new_context(viewport=DESKTOP)
    member.add_cookies(member_cookies(live_server, personas.ava, language))
    page, member_errors = watched(member)
    page.goto(live_server.url + reverse("assessments:detail", args=[assessment.pk]))
    page.locator("#answers-KV > summary").click()
    ask = page.locator(f'a[href$="/questions/{CODE}/thread/"]')
    assert ASK_LINK[language] in ask.inner_text()
    ask.click()
    page.fill("#thread-form textarea[name=body]", question)
    page.click("#thread-form button[type=submit]")
    page.wait_for_selector("#thread-messages")
    assert question in page.locator("#thread-messages").inner_text()

    # The vendor finds it beside the question in its section, and answers.
    vendor = chromium.new_context(viewport=DESKTOP)
    portal, vendor_errors = watched(vendor)
    portal.goto(live_server.url + reverse("portal:section", args=[token, "KV"]))
    portal.click(f'button[name=go][value="thread:{CODE}"]')
    portal.wait_for_url(f"**/questions/{CODE}/thread/")
    assert question in portal.locator("#thread-messages").inner_text()
    assert portal.locator("html").get_attribute("lang").lower().startswith(language[:2])
    portal.fill("#thread-form textarea[name=body]", answer)
    portal.click("#thread-form button[type=submit]")
    portal.wait_for_selector(f"#thread-messages >> text={answer}")

    # The assessor reads the answer and resolves the thread.
    page.reload()
    assert answer in page.locator("#thread-messages").inner_text()
    page.click("#thread-status-form button[type=submit]")
    page.wait_for_selector(f"#thread-status >> text={RESOLVED[language]}")
    portal.reload()
    assert portal.locator("#thread-form").count() == 0  # closed to the vendor

    assert member_errors == [] and vendor_errors == []
    member.close()
    vendor.close()
    thread = Thread.objects.get(assessment=assessment)
    assert thread.status == "resolved"
    assert [m.body for m in thread.messages.all()] == [question, answer]
