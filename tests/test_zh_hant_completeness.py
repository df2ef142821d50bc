"""Every visible string in Traditional Chinese: the catalogue is complete, and every page — each
persona's member pages, the vendor portal — and both editions of the PDF read in the reader's
language, with English left only in codes, names and quoted log lines.

A page fails on a message of the catalogue shown in English (a msgid without its msgstr, or a
fuzzy one), or on any English sentence outside the parts marked `translate="no"` (codes, file
names, quoted log lines, what people typed) and the names of this world (vendors, people,
organizations). The English edition of the PDF, in turn, carries no Chinese outside those.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from accounts.services import api_token_create
from assessments import factories
from assessments.drafts import drafts_save
from assessments.models import Channel
from assessments.services import (
    review_record,
    risk_decision_record,
    vendor_link_issue,
)
from probes.services import probe_setup_save
from reports.context import report_context
from reports.rendering import report_html
from tests.personas import member_of
from tests.probes.conftest import probed, setup_fields

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


# -- the world the pages show ------------------------------------------------------------------


@pytest.fixture
def world(catalog, personas, settings, launch_day_vendor):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.PROBE_RATE_PER_KEY = 100  # the probe below takes a second or two
    ava = member_of(personas.ava)
    scored = factories.incident_assessment(member=ava, through_link=True)
    risk_decision_record(
        assessment=scored,
        rule_id="KV-POOL-BELOW-CONTEXT",
        kind="acceptance",
        justification="Prompts capped at 200,000 tokens.",
        owner="Head of Procurement",
        expires_on=scored.latest_run.as_of.replace(year=scored.latest_run.as_of.year + 2),
        member=ava,
        channel=Channel.WEB,
    )
    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Short prompts only.",
        channel=Channel.WEB,
    )
    remediated = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Remediated Inference Ltd"),
        answers_from=factories.REMEDIATED,
        evidence=factories.logs(factories.REMEDIATED_LOG),
    )
    draft = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Draft Vendor Ltd"),
        submit=False,
    )
    link, token = vendor_link_issue(
        assessment=draft, contact_email="vendor@draft.test", member=ava, channel=Channel.WEB
    )
    drafts_save(assessment=draft, values={"CTX-01": "1M"}, vendor_link=link)
    # Questionnaire v2: an assessment probed against the launch-day reference vendor (its
    # result attached as PRB-02 and scored), and a draft whose vendor set a probe up.
    probed_v2 = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Probed Inference Ltd"),
        answers_from=factories.LAUNCH_V2,
        evidence=factories.logs(factories.LAUNCH_LOG),
        submit=False,
    )
    probed(probed_v2, personas.ava, launch_day_vendor.base_url)
    probed_v2 = factories.submit_and_score(probed_v2, actor=personas.ava, channel=Channel.WEB)
    draft_v2 = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Consenting Vendor Ltd"),
        answers_from=factories.LAUNCH_V2,
        evidence=factories.logs(factories.LAUNCH_LOG),
        submit=False,
    )
    link_v2, token_v2 = vendor_link_issue(
        assessment=draft_v2, contact_email="vendor@draft.test", member=ava, channel=Channel.WEB
    )
    probe_setup_save(
        assessment=draft_v2,
        vendor_link=link_v2,
        **setup_fields(
            {"key_a": "sk-zh-a-0123456789", "key_b": "sk-zh-b-0123456789"},
            channel=Channel.VENDOR_LINK,
        ),
    )
    api_token_create(user=personas.alice, organization=personas.acme, name="reports")
    names = [
        "Acme Procurement",
        "Cloud Inference Co",
        "Remediated Inference Ltd",
        "Draft Vendor Ltd",
        "Probed Inference Ltd",
        "Consenting Vendor Ltd",
        "Wei Chan, CISO of Inferno AI",
        "Workers AI",
        "Head of Procurement",
        "Prompts capped at 200,000 tokens.",
        "Short prompts only.",
        "reports",
        *(user.email for user in personas.acme_members.values()),
        "kv-team@cloud-inference.test",
        "vendor@draft.test",
    ]
    return {
        "scored": scored,
        "remediated": remediated,
        "draft": draft,
        "token": token,
        "probed": probed_v2,
        "draft_v2": draft_v2,
        "token_v2": token_v2,
        "names": names,
    }


def member_pages(world, personas) -> list[str]:
    scored, draft = world["scored"], world["draft"]
    slug = personas.acme.slug
    pages = [
        reverse("assessments:dashboard"),
        reverse("assessments:vendor_list"),
        reverse("assessments:vendor_create"),
        reverse("assessments:vendor_edit", args=[scored.vendor_id]),
        reverse("assessments:create"),
        reverse("assessments:compare")
        + f"?assessments={scored.pk}&assessments={world['remediated'].pk}",
        reverse("reports:verify"),
        reverse("accounts:organizations"),
        reverse("accounts:tokens", args=[slug]),
        reverse("accounts:members", args=[slug]),
        reverse("accounts:branding", args=[slug]),
    ]
    for assessment in (scored, draft, world["probed"], world["draft_v2"]):
        pages += [
            reverse(f"assessments:{name}", args=[assessment.pk])
            for name in ("detail", "edit", "findings", "review")
        ]
        pages.append(reverse("reports:assessment_reports", args=[assessment.pk]))
        pages.append(reverse("probes:assessment_probe", args=[assessment.pk]))
    return pages


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
        assert english_left(response.content.decode(), world["names"]) == [], url
    assert checked >= 12


def test_every_page_of_the_vendor_portal_reads_in_chinese(world, client):
    token = world["token"]
    spec = world["draft"].questionnaire.spec
    session = client.session
    link = world["draft"].vendor_links.get()
    session[f"portal:language:{link.pk}"] = "zh-hant"
    session.save()
    pages = [reverse("portal:landing", args=[token]), reverse("portal:review", args=[token])]
    pages += [
        reverse("portal:section", args=[token, s.code]) for s in spec.sections if s.vendor_facing
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert english_left(response.content.decode(), world["names"]) == [], url
    refused = client.post(reverse("portal:section", args=[token, "CTX"]), {"upload": "CTX-08"})
    assert refused.status_code == 400
    assert english_left(refused.content.decode(), world["names"]) == []


def test_the_portal_of_questionnaire_v2_and_its_probe_page_read_in_chinese(world, client):
    token = world["token_v2"]
    session = client.session
    link = world["draft_v2"].vendor_links.get()
    session[f"portal:language:{link.pk}"] = "zh-hant"
    session.save()
    spec = world["draft_v2"].questionnaire.spec
    pages = [reverse("portal:section", args=[token, s.code]) for s in spec.sections]
    pages = [url for url in pages if "/USE/" not in url]
    pages.append(reverse("probes:portal_setup", args=[token]))
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert english_left(response.content.decode(), world["names"]) == [], url
    refused = client.post(reverse("probes:portal_setup", args=[token]), {"authorise": ""})
    assert refused.status_code == 400
    assert english_left(refused.content.decode(), world["names"]) == []


@pytest.mark.parametrize("assessment", ["scored", "remediated", "probed"])
def test_both_editions_of_the_pdf_read_in_their_language(world, assessment):
    run = world[assessment].latest_run
    chinese = report_html(report_context(run=run, language="zh-hant", number="AVIA-X"))
    assert english_left(chinese, world["names"]) == []
    english = visible_text(
        report_html(report_context(run=run, language="en", number="AVIA-X")), world["names"]
    )
    assert re.findall(r"[\u4e00-\u9fff]+", english) == []
