"""Every visible string in Traditional Chinese: the catalogue is complete, and every page — each
persona's member pages, the vendor portal — and both editions of the PDF read in the reader's
language, with English left only in codes, names and quoted log lines.

A page fails on a message of the catalogue shown in English (a msgid without its msgstr, or a
fuzzy one), or on any English sentence outside the parts marked `translate="no"` (codes, file
names, quoted log lines, what people typed) and the names of this world (vendors, people,
organizations). The English edition of the PDF, in turn, carries no Chinese outside those.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from openpyxl import load_workbook

from reports.context import report_context
from reports.rendering import report_html
from tests.site_pages import (
    ProbeWorld,
    build_probe_world,
    member_pages,
    portal_pages,
    probe_pages,
)

pytestmark = pytest.mark.django_db

PO = Path(settings.BASE_DIR) / "locale" / "zh_Hant" / "LC_MESSAGES" / "django.po"
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
SKIPPED = {"script", "style", "code", "pre", "textarea"}  # logs, machine text, typed text
SHOWN_ATTRIBUTES = ("title", "aria-label", "alt", "placeholder")
ENGLISH_SENTENCE = re.compile(r"\b[A-Za-z][a-z']+(?:[ ,;:]+[A-Za-z][a-z']+){3,}\b")
# Words that are the same in both languages (glossary: prefill / decode nodes; product names).
SHARED_TERMS = [
    "prefill",
    "decode",
    "SGLang",
    "vLLM",
    "TensorRT-LLM",
    "TGI",
    "AVIA",
    "KV",
    "GPU",
    "RDMA",
    "Mooncake",
    "NIXL",
    "API",
    "PDF",
    "JavaScript",
    "IANA",
    "gzip",
]


# -- what a reader sees --------------------------------------------------------------------


class VisibleText(HTMLParser):
    """The text a reader sees (and hears: titles, labels, alternative texts), without the parts
    marked translate="no", scripts, styles and code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        skip = tag in SKIPPED or values.get("translate") == "no"
        if self.skipping or skip:
            if tag not in VOID:
                self.skipping.append(tag)
            return
        self.parts.extend(str(values[name]) for name in SHOWN_ATTRIBUTES if values.get(name))

    def handle_endtag(self, tag: str) -> None:
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def visible_text(html: str, names: Iterable[str]) -> str:
    parser = VisibleText()
    parser.feed(html)
    text = " \n ".join(parser.parts)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " ")
    return text


def catalogue_msgids() -> list[str]:
    """The catalogue's messages of two words or more, placeholders cut out (the parts a page
    would show verbatim if the translation were missing)."""
    entries = re.findall(r'^msgid ((?:".*"\n)+)', PO.read_text(encoding="utf-8"), re.M)
    messages = []
    for entry in entries:
        text = "".join(re.findall(r'"(.*)"', entry)).replace('\\"', '"')
        for part in re.split(r"%\(\w+\)[sd]|%[sd]|\{[^}]*\}|\\n", text):
            part = part.strip(' .,:;()“”"')
            if len(part.split()) >= 2 and re.search(r"[a-z]", part):
                messages.append(part)
    return sorted(set(messages), key=len, reverse=True)


def english_left(html: str, names: Iterable[str]) -> list[str]:
    # Titles in book-title marks are names: an instrument published in English only keeps its
    # English title (〈Consumer Protection in respect of …〉).
    text = re.sub(r"〈[^〉]*〉|《[^》]*》", " ", visible_text(html, names))
    for term in SHARED_TERMS:
        text = re.sub(rf"\b{re.escape(term)}\b", " ", text)
    found = [message for message in catalogue_msgids() if message in text]
    found += ENGLISH_SENTENCE.findall(text)
    return found


# -- the world the pages show (tests/site_pages.py) ---------------------------------------------


@pytest.fixture
def probe_world(catalog, personas, settings, launch_day_vendor) -> ProbeWorld:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.PROBE_RATE_PER_KEY = 100  # the probe takes a second or two
    return build_probe_world(personas, launch_day_vendor.base_url)


def test_the_catalogue_has_a_translation_for_every_message():
    untranslated = subprocess.run(
        ["msgattrib", "--untranslated", "--no-wrap", str(PO)], capture_output=True, text=True
    ).stdout
    fuzzy = subprocess.run(
        ["msgattrib", "--only-fuzzy", "--no-wrap", str(PO)], capture_output=True, text=True
    ).stdout
    assert re.findall(r'^msgid "(.+)"', untranslated, re.M) == []
    assert re.findall(r'^msgid "(.+)"', fuzzy, re.M) == []


@pytest.mark.parametrize("role", ["owner", "assessor", "reviewer", "viewer"])
def test_every_member_page_reads_in_chinese(world, personas, role):
    client = Client()
    client.force_login(personas.acme_members[role])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hant"
    checked = 0
    for url in member_pages(world, personas):
        response = client.get(url)
        if response.status_code == 403:  # not this role's page
            continue
        assert response.status_code == 200, url
        checked += 1
        assert english_left(response.content.decode(), world.names) == [], url
    assert checked >= 14


def test_every_page_of_the_vendor_portal_reads_in_chinese(world, client):
    token = world.token
    session = client.session
    link = world.draft.vendor_links.get()
    session[f"portal:language:{link.pk}"] = "zh-hant"
    session.save()
    for url in portal_pages(world):
        response = client.get(url)
        assert response.status_code == 200, url
        assert english_left(response.content.decode(), world.names) == [], url
    refused = client.post(reverse("portal:section", args=[token, "CTX"]), {"upload": "CTX-08"})
    assert refused.status_code == 400
    assert english_left(refused.content.decode(), world.names) == []
    # A workbook refused cell by cell: each problem in Chinese, named by sheet, row and code.
    workbook = client.get(reverse("portal_workbook:download", args=[token, "zh-hant"])).content
    book = load_workbook(io.BytesIO(workbook))
    book["CTX"]["E4"].value = "1M"
    book["CTX"]["E5"].value = "=1+1"
    filled = io.BytesIO()
    book.save(filled)
    refused = client.post(
        reverse("portal_workbook:page", args=[token]),
        {"workbook": SimpleUploadedFile("answers.xlsx", filled.getvalue())},
    )
    assert refused.status_code == 400 and refused.context["cells"]
    assert english_left(refused.content.decode(), world.names) == []
    not_a_workbook = client.post(
        reverse("portal_workbook:page", args=[token]),
        {"workbook": SimpleUploadedFile("answers.xlsx", b"not a workbook")},
    )
    assert not_a_workbook.status_code == 400
    assert english_left(not_a_workbook.content.decode(), world.names) == []


def test_the_workbook_and_the_exports_read_in_chinese(world, personas):
    """Every text cell of a Chinese workbook and of the Chinese exports, as the reader reads it."""
    client = Client()
    client.force_login(personas.ava)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hant"
    scored = world.scored
    texts: list[str] = []
    content = client.get(reverse("spreadsheets:workbook_download", args=[scored.pk, "zh-hant"]))
    book = load_workbook(io.BytesIO(content.content))
    for sheet in book.worksheets:
        if sheet.sheet_state != "visible":
            continue
        for row in sheet.iter_rows(values_only=True):
            texts += [value for value in row if isinstance(value, str)]
    for url in (
        reverse("spreadsheets:findings_export", args=[scored.pk, "csv"]),
        reverse("spreadsheets:portfolio_export", args=["csv"]),
    ):
        body = b"".join(client.get(url).streaming_content).decode("utf-8")
        texts += next(csv.reader(io.StringIO(body.lstrip("\ufeff"))))
    # What people typed and the vendor's own words are quoted, not translated.
    answers = [str(v) for v in scored.answers.values_list("value", flat=True)]
    comments = list(scored.answers.values_list("comment", flat=True))
    shown = "\n".join(t for t in texts if t not in answers and t not in comments)
    shown = re.sub(r"`[^`]*`", " ", shown)  # quoted from logs and settings, as <code> on pages
    assert english_left(escape(shown), world.names) == []


def test_the_probe_pages_and_the_portal_of_questionnaire_v2_read_in_chinese(
    probe_world, personas, client
):
    """The assessor's probe page of a probed assessment and of one whose vendor set a probe
    up; the vendor's v2 sections and probe page, and its refusal."""
    client.force_login(personas.ava)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hant"
    member, portal = probe_pages(probe_world)
    for url in member:
        response = client.get(url)
        assert response.status_code == 200, url
        assert english_left(response.content.decode(), probe_world.names) == [], url
    client.logout()
    session = client.session
    session[f"portal:language:{probe_world.draft.vendor_links.get().pk}"] = "zh-hant"
    session.save()
    for url in portal:
        response = client.get(url)
        assert response.status_code == 200, url
        assert english_left(response.content.decode(), probe_world.names) == [], url
    setup = reverse("probes:portal_setup", args=[probe_world.token])
    refused = client.post(setup, {"authorise": ""})
    assert refused.status_code == 400
    assert english_left(refused.content.decode(), probe_world.names) == []


def test_both_editions_of_the_probe_chapter_read_in_their_language(probe_world):
    run = probe_world.probed.latest_run
    chinese = report_html(report_context(run=run, language="zh-hant", number="AVIA-X"))
    assert english_left(chinese, probe_world.names) == []
    english = visible_text(
        report_html(report_context(run=run, language="en", number="AVIA-X")), probe_world.names
    )
    assert re.findall(r"[\u4e00-\u9fff]+", english) == []


@pytest.mark.parametrize("assessment", ["scored", "remediated"])
def test_both_editions_of_the_pdf_read_in_their_language(world, assessment):
    run = getattr(world, assessment).latest_run
    chinese = report_html(report_context(run=run, language="zh-hant", number="AVIA-X"))
    assert english_left(chinese, world.names) == []
    english = visible_text(
        report_html(report_context(run=run, language="en", number="AVIA-X")), world.names
    )
    assert re.findall(r"[\u4e00-\u9fff]+", english) == []
