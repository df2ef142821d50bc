"""The portal in a real browser: plain forms with JavaScript off, htmx enhancements with it on."""

import pytest

from .conftest import LOGS, portal_url

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.portal.urls")]

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def browser():
    with sync_api.sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Exception as exc:  # no usable Chromium here
            pytest.skip(f"Chromium is not available: {exc}")
        yield browser
        browser.close()


def open_page(browser, live_server, path, *, javascript=True):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(live_server.url + path)
    return page


def test_without_javascript_forms_save_upload_and_report_errors(
    transactional_db, live_server, token, browser
):
    page = open_page(browser, live_server, portal_url(token, "section", "CTX"), javascript=False)
    page.fill("#q-CTX-01", "1M")
    page.press("#q-CTX-01", "Enter")  # Enter submits the section form (Save), not Upload/Remove
    assert page.locator(".error-summary").is_visible()
    assert "CTX-01:" in page.locator(".error-summary").inner_text()
    assert page.input_value("#q-CTX-01") == "1M"
    page.set_input_files("#q-CTX-08-file", str(LOGS / "sglang-prefill-glm53-launch.log"))
    page.click("#q-CTX-08-upload")
    assert "SGLang log: pool 681,280 tokens" in page.locator("#evidence-CTX-08").inner_text()
    page.click("#evidence-CTX-08 button:has-text('Remove')")
    assert "No file uploaded yet." in page.locator("#evidence-CTX-08").inner_text()
    page.fill("#q-CTX-01", "1,048,576")
    page.click("#section-form button.primary")
    assert "Saved." in page.content()
    assert page.input_value("#q-CTX-01") == "1,048,576"


def test_with_htmx_conditional_questions_appear_without_a_reload(
    transactional_db, live_server, token, browser
):
    page = open_page(browser, live_server, portal_url(token, "section", "PRF"))
    page.wait_for_function("() => window.htmx !== undefined")
    page.evaluate("window.notReloaded = true")
    page.fill("#q-PRF-01", "typed before the preview")
    assert page.locator("#q-PRF-08").count() == 0
    page.check("#q-PRF-07-yes")
    page.wait_for_selector("#q-PRF-08")
    assert page.evaluate("window.notReloaded") is True
    assert page.input_value("#q-PRF-01") == "typed before the preview"
    assert page.is_checked("#q-PRF-07-yes")
    page.check("#q-PRF-07-no")
    # Hidden in place (its inputs kept, with what they hold), and the reason shown instead.
    page.wait_for_selector("#q-PRF-08", state="hidden")
    assert page.locator("#question-PRF-08 .question-not-applicable").is_visible()


def test_with_htmx_an_upload_keeps_the_answers_being_typed(
    transactional_db, live_server, token, browser
):
    page = open_page(browser, live_server, portal_url(token, "section", "CTX"))
    page.wait_for_function("() => window.htmx !== undefined")
    page.fill("#q-CTX-01", "1048576")
    page.set_input_files("#q-CTX-08-file", str(LOGS / "sglang-prefill-glm53-launch.log"))
    page.click("#q-CTX-08-upload")
    page.wait_for_selector("#evidence-CTX-08 .parse-result")
    assert "SGLang log: pool 681,280 tokens" in page.locator("#evidence-CTX-08").inner_text()
    assert page.input_value("#q-CTX-01") == "1048576"  # kept as a draft by the upload
    assert "Draft, not saved yet" in page.locator("#question-CTX-01").inner_text()
