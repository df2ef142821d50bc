"""A vendor opens a link that expired, in real Chromium, in English and Traditional Chinese:
the page names the buyer and whom to ask for a new link, shows nothing of the assessment, and
is saved as a screenshot (artifacts/screenshots/dead-link-<language>-<device>.png)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.personas import make_personas

from .conftest import DESKTOP, PHONE, open_assessment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEADINGS = {"en": "This link has expired", "zh-hant": "此連結已過期"}


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_an_expired_link_names_the_buyer_in_the_links_language(
    catalog, live_server, chromium, screenshots, language
):
    personas = make_personas()
    assessment, token = open_assessment(personas, language)
    link = assessment.vendor_links.get()
    link.expires_at = timezone.now() - dt.timedelta(days=1)
    link.save(update_fields=["expires_at"])
    for device, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context = chromium.new_context(viewport=viewport, is_mobile=device == "phone")
        page = context.new_page()
        response = page.goto(live_server.url + reverse("portal:landing", args=[token]))
        assert response is not None and response.status == 404
        text = page.locator("main").inner_text()
        assert HEADINGS[language] in text
        assert "Acme Procurement" in text and personas.ava.email in text
        assert assessment.vendor.name not in page.content()
        page.screenshot(
            path=str(screenshots / f"dead-link-{language}-{device}.png"), full_page=True
        )
        context.close()
