"""The SSO happy path in real Chromium, in both languages: the login page's link, the address,
the tests' OpenID provider process (over real HTTP), and back to AVIA signed in."""

from __future__ import annotations

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.personas import make_personas

from .conftest import configure

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

LINK = {"en": "Sign in with your organization's SSO", "zh-hant": "以你機構的單一登入（SSO）登入"}
CONTINUE = {"en": "Continue", "zh-hant": "繼續"}


@pytest.fixture
def chromium(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    sync_api = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_a_member_signs_in_through_the_organization_provider(
    live_server, chromium, oidc_providers, language
):
    cast = make_personas()
    configure(cast.acme, oidc_providers["good"])
    context = chromium.new_context()
    host = live_server.url.split("://", 1)[1].split(":")[0]
    context.add_cookies(
        [{"name": "django_language", "value": language, "domain": host, "path": "/"}]
    )
    page = context.new_page()

    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name=LINK[language]).click()
    page.get_by_role("heading", name=LINK[language]).wait_for()
    page.locator("input[name=email]").fill("vic@acme.test")
    page.get_by_role("button", name=CONTINUE[language]).click()
    page.wait_for_url(lambda url: url.startswith(live_server.url) and "/accounts/" not in url)
    page.wait_for_load_state()

    assert "/accounts/login/" not in page.url and "/sso/" not in page.url, page.url
    assert page.locator("html").get_attribute("lang").lower().startswith(language[:2])
    assert "vic@acme.test" in page.content()
    context.close()
