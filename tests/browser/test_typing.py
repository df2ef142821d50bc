"""Every keystroke kept: a vendor answers a question that shows or hides others, then types on
at once, at 30 ms a key, in real Chromium — in English and Traditional Chinese, on a phone and
on a desktop, and through an input method (composition events). What was typed must be on the
screen, in the kept draft once the autosave has run, and back after a reload; no input element
that was on the page may be replaced by the autosave; and nothing is saved mid-composition.

Waits are on conditions (an element appears, a draft reaches the database), never longer than a
person would leave between two actions.
"""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from assessments.models import AnswerDraft, Assessment
from tests.personas import make_personas

from .conftest import DESKTOP, PHONE, open_assessment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GPU = "每個實例 8 張 H200 GPU"
PREFIX = "Prefix cache on since launch."
KEY_DELAY = 30  # ms a key: a quick typist
SETTLE = 5.0  # s: how long the autosave may take to answer


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def personas(transactional_db):
    return make_personas()


class Vendor:
    """One vendor's browser page on a portal section, as a person uses it on `device`."""

    def __init__(self, chromium, base_url: str, token: str, *, device: str) -> None:
        phone = device == "phone"
        self.context = chromium.new_context(
            viewport=PHONE if phone else DESKTOP, is_mobile=phone, has_touch=phone
        )
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        # The autosaves answered: what each carried (multipart) and its status.
        self.saves: list[tuple[str, int]] = []
        self.page.on("requestfinished", self._log_save)
        self.base_url = base_url
        self.token = token
        self.phone = phone

    def _log_save(self, request) -> None:
        if request.method == "POST" and request.url.endswith("/draft/"):
            response = request.response()
            self.saves.append((request.post_data or "", response.status if response else 0))

    def wait_for_an_autosave_of(self, typed: dict[str, str]) -> None:
        """Until an autosave that carried every text typed has been answered: the server has
        kept it then. (The test reads the database only once the page is quiet: the live
        server shares its in-memory SQLite connection with this thread.)"""

        def carried(body: str) -> bool:
            return all(f'name="{n}"\r\n\r\n{t}\r\n' in body for n, t in typed.items())

        deadline = time.monotonic() + SETTLE
        while not any(carried(body) and status == 200 for body, status in self.saves):
            assert time.monotonic() < deadline, (
                f"no autosave carried all that was typed ({typed}) within {SETTLE} s; "
                f"{len(self.saves)} sent"
            )
            self.page.wait_for_timeout(50)
        self.page.wait_for_function("() => !document.querySelector('.htmx-request')")

    def open(self, section: str) -> None:
        self.page.goto(self.base_url + reverse("portal:section", args=[self.token, section]))
        # Every input on the page, kept aside: one the autosave replaced is no longer connected.
        self.page.evaluate(
            "() => { window.originalInputs = Array.from("
            "document.querySelectorAll('#section-form input, #section-form textarea')); }"
        )

    def choose(self, selector: str) -> None:
        """Tap (phone) or click (desktop) a radio button, as a person does."""
        target = self.page.locator(selector)
        if self.phone:
            target.tap()
        else:
            target.click()

    def type_into(self, selector: str, text: str) -> None:
        field = self.page.locator(selector)
        if self.phone:
            field.tap()
        else:
            field.click()
        field.press_sequentially(text, delay=KEY_DELAY)

    def replaced_inputs(self) -> list[str]:
        """Inputs that were on the page when it opened and are no longer in it (replaced by a
        redraw, or removed)."""
        return self.page.evaluate(
            "() => window.originalInputs.filter(el => !el.isConnected).map(el => el.id || el.name)"
        )


def drafts(assessment: Assessment) -> dict[str, tuple[object, str]]:
    return {
        d.question_code: (d.value, d.comment)
        for d in AnswerDraft.objects.filter(assessment=assessment)
    }


def assert_kept(vendor: Vendor, assessment: Assessment, typed: dict[str, str]) -> None:
    """`typed`: field name (a question code, or comment-<code>) → the whole text typed."""
    page = vendor.page
    for name, text in typed.items():
        shown = page.locator(f"#section-form [name='{name}']").input_value()
        assert shown == text, f"on screen, {name} reads {shown!r}, typed {text!r}"

    vendor.wait_for_an_autosave_of(typed)
    kept = drafts(assessment)
    for name, text in typed.items():
        code = name.removeprefix("comment-")
        value, comment = kept.get(code, ("", ""))
        saved = comment if name.startswith("comment-") else value
        assert saved == text, f"the kept draft of {name} reads {saved!r}, typed {text!r}"
    assert vendor.replaced_inputs() == [], "the autosave replaced inputs"
    assert vendor.errors == []
    page.reload()
    for name, text in typed.items():
        shown = page.locator(f"#section-form [name='{name}']").input_value()
        assert shown == text, f"after a reload, {name} reads {shown!r}, typed {text!r}"


@pytest.mark.parametrize(
    ("language", "device"),
    [("en", "desktop"), ("zh-hant", "phone"), ("en", "phone"), ("zh-hant", "desktop")],
)
def test_typing_right_after_a_question_shows_or_hides_others_keeps_every_character(
    catalog, personas, live_server, chromium, language, device
):
    assessment, token = open_assessment(personas, language)
    vendor = Vendor(chromium, live_server.url, token, device=device)
    page = vendor.page

    # PRF: "no" hides PRF-08; type on at once in a field that was there already.
    vendor.open("PRF")
    vendor.choose("#q-PRF-07-no")
    vendor.type_into("#q-PRF-09", GPU)
    # Type, then at once change another answer that hides a question (PRF-06).
    vendor.type_into("#q-comment-PRF-07", PREFIX)
    vendor.choose("#q-PRF-05-proprietary")
    # "yes" brings PRF-08 back: type on at once.
    vendor.choose("#q-PRF-07-yes")
    vendor.type_into("#q-comment-PRF-09", PREFIX)
    page.locator("#q-PRF-08-mooncake").wait_for(state="visible")
    assert page.locator("#q-PRF-06").is_hidden()
    assert_kept(
        vendor,
        assessment,
        {"PRF-09": GPU, "comment-PRF-07": PREFIX, "comment-PRF-09": PREFIX},
    )

    # INC: "yes" asks INC-02, which appears: the vendor types in it as soon as it is there,
    # and the answer to a question that was on the page goes on at once too.
    vendor.open("INC")
    vendor.choose("#q-INC-01-yes")
    page.locator("#q-INC-02").wait_for(state="visible")
    vendor.type_into("#q-INC-02", PREFIX)
    vendor.choose("#q-INC-06-no")
    vendor.type_into("#q-comment-INC-01", GPU)
    assert_kept(vendor, assessment, {"INC-02": PREFIX, "comment-INC-01": GPU})
    vendor.context.close()


def test_an_input_method_composition_is_not_saved_or_redrawn_until_it_ends(
    catalog, personas, live_server, chromium
):
    """Chinese typed with an input method: "mei" composed, then "每" chosen. While the
    composition is open (a person reads the candidates for a second), nothing is sent."""
    assessment, token = open_assessment(personas, "zh-hant")
    vendor = Vendor(chromium, live_server.url, token, device="desktop")
    page = vendor.page
    vendor.open("PRF")
    composing = {"on": False}
    sent_while_composing: list[str] = []

    def on_request(request) -> None:
        if request.method == "POST" and composing["on"]:
            sent_while_composing.append(request.post_data or "")

    page.on("request", on_request)
    cdp = vendor.context.new_cdp_session(page)
    vendor.choose("#q-PRF-07-no")  # a change that hides PRF-08, then straight into the IME
    page.locator("#q-PRF-09").click()
    page.keyboard.type("8 ", delay=KEY_DELAY)
    composing["on"] = True
    for text in ("m", "me", "mei"):
        cdp.send(
            "Input.imeSetComposition",
            {"text": text, "selectionStart": len(text), "selectionEnd": len(text)},
        )
        page.wait_for_timeout(120)
    page.wait_for_timeout(1000)  # choosing among the candidates: longer than the autosave delay
    composing["on"] = False
    page.keyboard.insert_text("每")  # the candidate chosen: the composition ends
    page.keyboard.type(" H200", delay=KEY_DELAY)
    assert sent_while_composing == [], f"saved mid-composition: {sent_while_composing}"
    assert_kept(vendor, assessment, {"PRF-09": "8 每 H200"})
    vendor.context.close()
