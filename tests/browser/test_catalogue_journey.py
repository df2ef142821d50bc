"""Bring your own questionnaire, in real Chromium, in English and in Traditional Chinese (the
owner switches the interface to Chinese with the language buttons, as a person does): the owner
uploads a questionnaire as YAML with a mistake, reads the problem (file, line, code), fixes it,
uploads it again, previews it, tries its rules in the workbench (which rules fire, the score and
tier), saves a test case and publishes it; imports the same questionnaire from an .xlsx through
the column mapping, to a valid draft; assesses a vendor with the published questionnaire (the
vendor answers two questions in the portal and the third in the downloaded workbook, uploaded
back; the real Celery worker scores, the findings page shows the custom rule, a PDF is generated
in the owner's language, downloaded and read); then uploads version 2 of the rules with a
changed rule and sees its impact on the saved test case and on the assessment before
publishing it.

The questionnaire is written in English only (a consultant's own): the Chinese pages and the
Chinese PDF say so rather than showing half a translation.

One browser context a language. Screenshots: artifacts/screenshots/catalogue-<language>-*.png.
"""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pypdf
import pytest
from openpyxl import Workbook

from assessments.models import Assessment, Channel
from assessments.services.vendors import vendor_create
from scoring.models import Ruleset
from tests.personas import PASSWORD
from tests.spreadsheets.conftest import fill

from .conftest import DESKTOP

pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
]

SCORING_TIMEOUT = 60  # s: the worker scores the submitted answers
REPORT_TIMEOUT = 90  # s: the worker renders the PDF
HIGH = {"en": "high", "zh-hant": "高"}  # the tier, as the page names it
VENDOR_COLUMN = {"en": "Vendor", "zh-hant": "供應商"}
KEY_DELAY = 30  # ms a key, as tests/browser/test_typing.py types

CATALOGUE = """\
# A consultant's client questionnaire, in English only.
questionnaire:
  slug: client-dd
  version: "1"
  title: Client due diligence
  sections:
    - code: GOV
      answered_by: vendor
      title: Governance
      questions:
        - code: GOV-01
          type: yes_no
          required: true
          text: "Do you keep an AI risk register?"
        - code: GOV-02
          type: choice
          required: true
          text: "Where is customer data processed?"
          options:
            - {code: hk, label: Hong Kong only}
            - {code: abroad, label: Outside Hong Kong}
        - code: GOV-03
          type: integer
          required: true
          text: "How many days are prompts kept?"
ruleset:
  slug: client-dd-rules
  version: "1"
  questionnaire: client-dd@1
  title: Client due diligence rules
  points: {critical: 40, high: 15, medium: 5, low: 1}
  rules:
    - id: DD-NO-REGISTER
      severity: high
      when: 'GOV_01 != "yes"'
      title: No AI risk register
      rationale: Risks are not tracked.
      remediation: Keep a register.
    - id: DD-DATA-ABROAD
      severity: medium
      when: 'GOV_02 == "abroad"'
      title: Customer data processed abroad
      rationale: Transfers need safeguards.
      remediation: Document the safeguards.
    - id: DD-LONG-RETENTION
      severity: low
      when: 'GOV_03 > 30'
      title: Prompts kept over 30 days
      rationale: Long retention widens exposure.
      remediation: Shorten retention.
"""
# The mistake: a comparison with a string that is not one of the options.
MISTAKE = CATALOGUE.replace('GOV_02 == "abroad"', 'GOV_02 == "abraod"')
MISTAKE_LINE = next(n for n, line in enumerate(MISTAKE.splitlines(), 1) if "abraod" in line)

# Version 2 of the rules, for the published questionnaire: retention over 14 days is a finding.
RULES_V2 = "ruleset:" + CATALOGUE.split("\nruleset:", 1)[1].replace(
    'version: "1"', 'version: "2"'
).replace("GOV_03 > 30", "GOV_03 > 14").replace("over 30 days", "over 14 days")

# The test case and the vendor's answers: no register, data abroad, prompts kept 20 days.
CASE = {"GOV-01": "no", "GOV-02": "abroad", "GOV-03": "20"}
VENDOR = {"GOV-01": "yes", "GOV-02": "abroad", "GOV-03": 20}


def sheet_workbook(path: Path) -> Path:
    """The same questions in a workbook of the client's own: one question a row, the
    question's column headed "Wording", which AVIA does not recognise (the owner maps it)."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Questions"
    sheet.append(["Code", "Section", "Wording", "Type", "Options", "Required"])
    sheet.append(
        ["GOV-01", "Governance", "Do you keep an AI risk register?", "Yes/No", None, "yes"]
    )
    sheet.append(
        [
            "GOV-02",
            "Governance",
            "Where is customer data processed?",
            "choice",
            "hk = Hong Kong only\nabroad = Outside Hong Kong",
            "yes",
        ]
    )
    sheet.append(
        ["GOV-03", "Governance", "How many days are prompts kept?", "integer", None, "yes"]
    )
    book.save(path)
    return path


def submit(page, selector: str) -> None:
    """Click a link or a form's button and wait for the page it leads to, as a person does."""
    with page.expect_navigation():
        page.click(selector)


class Owner:
    """The owner's browser: one context, with its pages, and the screenshots."""

    def __init__(self, chromium, base_url: str, folder: Path, language: str) -> None:
        self.context = chromium.new_context(viewport=DESKTOP, locale="en-GB", accept_downloads=True)
        self.page = self.context.new_page()
        self.base_url = base_url
        self.folder = folder
        self.language = language
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def shot(self, page, name: str) -> None:
        page.screenshot(
            path=str(self.folder / f"catalogue-{self.language}-{name}.png"), full_page=True
        )

    def go(self, path: str) -> None:
        self.page.goto(f"{self.base_url}{path}")

    def upload_yaml(self, tmp_path: Path, text: str, name: str) -> None:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        self.go("/catalogues/")
        self.page.set_input_files("main form input[type=file][name=file]", str(path))
        submit(self.page, "main form[enctype] button.primary")


def test_an_owner_brings_a_questionnaire_of_their_own(
    live_server, worker, personas, mailoutbox, chromium, screenshots, tmp_path, language
):
    started = time.monotonic()
    owner = Owner(chromium, live_server.url, screenshots, language)
    page = owner.page

    # -- sign in, and (zh-Hant) switch the interface to Traditional Chinese -------------------
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", personas.alice.email)
    page.fill("input[name=password]", PASSWORD)
    submit(page, "main form button[type=submit]")
    assert page.url.rstrip("/") == live_server.url, page.url
    if language == "zh-hant":
        submit(page, "form.language button[value='zh-hant']")
        assert page.get_attribute("html", "lang") == "zh-Hant-HK"

    # -- upload with a mistake: the problem names the file, the line and the rule ------------
    owner.upload_yaml(tmp_path, MISTAKE, "client-dd.yaml")
    problems = page.locator("#catalogue-problems")
    assert problems.is_visible()
    row = problems.locator("tbody tr", has_text="DD-DATA-ABROAD")
    cells = row.locator("td").all_inner_texts()
    assert cells[:3] == ["client-dd.yaml", str(MISTAKE_LINE), "DD-DATA-ABROAD"], cells
    assert "abraod" in cells[3]
    assert "GOV-02" in cells[3]  # the question whose options it is not among
    if language == "zh-hant":  # in the member's language, all of it
        assert re.search(r"[\u4e00-\u9fff]", cells[3]) and "option" not in cells[3], cells[3]
    assert not Ruleset.objects.filter(organization=personas.acme).exists()
    owner.shot(page, "upload-problem")

    # -- fixed, uploaded again: a draft, previewed (English only) ------------------------------
    owner.upload_yaml(tmp_path, CATALOGUE, "client-dd.yaml")
    assert re.search(r"/catalogues/\d+/$", page.url), page.url
    assert "client-dd-rules@1" in page.inner_text("h1")
    assert page.locator("#english-only").is_visible()
    preview = page.locator("section.preview").first
    assert "Do you keep an AI risk register?" in preview.inner_text()
    assert preview.locator("[id='q-GOV-02-abroad']").count() == 1
    catalogue_url = page.url
    owner.shot(page, "draft-preview")

    # -- the workbench: answers in, rules fired and why, score and tier; a test case saved ---
    submit(page, f"a[href$='/rulesets/{catalogue_url.rstrip('/').rsplit('/', 1)[1]}/workbench/']")
    assert "/workbench/" in page.url
    form = page.locator("form:has(input[name=source][value=form])")
    form.locator("[id='q-GOV-01-no']").check()
    form.locator("[id='q-GOV-02-abroad']").check()
    form.locator("[id='q-GOV-03']").press_sequentially(CASE["GOV-03"], delay=KEY_DELAY)
    form.locator("button.primary").click()
    page.wait_for_selector("#result-section")
    facts = page.inner_text("#result-section dl.facts")
    tier, score = page.locator("#result-section dl.facts dd").all_inner_texts()[:2]
    assert (tier.strip().lower(), score.strip()) == (HIGH[language], "20")  # 15 + 5
    assert "DD-NO-REGISTER" in facts and "DD-DATA-ABROAD" in facts
    assert page.locator("#rule-DD-NO-REGISTER strong.fired").count() == 1
    retention = page.inner_text("#rule-DD-LONG-RETENTION")
    assert page.locator("#rule-DD-LONG-RETENTION strong.fired").count() == 0
    assert "GOV_03" in retention and "20" in retention  # why: the value it read
    owner.shot(page, "workbench-result")
    page.locator("#result-section input[name=name]").press_sequentially(
        "No register, data abroad", delay=KEY_DELAY
    )
    submit(page, "#result-section form button[type=submit]")
    assert "No register, data abroad" in page.inner_text("section[aria-labelledby=cases]")
    owner.shot(page, "workbench-case-saved")

    # -- publish ---------------------------------------------------------------------------
    page.goto(catalogue_url)
    submit(page, "main .actions a.button.primary")
    submit(page, "main form button.primary")
    page.wait_for_url(catalogue_url)
    ruleset_v1 = Ruleset.objects.get(organization=personas.acme, slug="client-dd-rules")
    assert ruleset_v1.is_draft is False
    owner.shot(page, "published")

    # -- the same questionnaire from a spreadsheet, through the column mapping ---------------
    workbook = sheet_workbook(tmp_path / "client-dd.xlsx")
    owner.go("/questionnaires/import/")
    page.set_input_files("#id_workbook", str(workbook))
    submit(page, "main form[enctype] button.primary")
    assert "/questionnaires/import/" in page.url and page.locator("#id_text_en").count()
    assert "Wording" in page.inner_text("main")  # the headers, with the first rows
    assert page.input_value("#id_code") != ""  # "Code" is recognised
    page.select_option("#id_text_en", label="C — Wording")  # "Wording" is not: the owner maps it
    page.locator("#id_title_en").press_sequentially("Client due diligence sheet", delay=KEY_DELAY)
    page.fill("#id_slug", "client-dd-sheet")
    owner.shot(page, "xlsx-mapping")
    submit(page, "main form[method=post] button.primary")
    assert re.search(r"/catalogues/\d+/$", page.url), page.inner_text("main")[:2000]
    assert "client-dd-sheet-rules@1" in page.inner_text("h1")
    assert page.locator("#english-only").is_visible()
    assert "Where is customer data processed?" in page.inner_text("section.preview")
    owner.shot(page, "xlsx-draft")

    # -- assess a vendor with the published questionnaire -----------------------------------
    vendor_create(
        organization=personas.acme,
        actor=personas.alice,
        channel=Channel.WEB,
        name="Client Vendor",
        contact_email="security@client-vendor.test",
    )
    owner.go("/assessments/new/")
    with page.expect_response(lambda response: "q=Client" in response.url):
        page.locator("#id_vendor_q").press_sequentially("Client", delay=KEY_DELAY)
    page.get_by_label("Client Vendor", exact=True).check()
    # htmx redraws the buyer's questions for the questionnaire chosen (it has none)
    with page.expect_response(lambda response: "questionnaire=" in response.url):
        page.select_option("#id_questionnaire", "client-dd@1")
    page.fill("#id_due_date", "2030-12-31")
    submit(page, "main form button.primary")
    page.wait_for_selector("form.invite-form")
    assessment = Assessment.objects.get(vendor__name="Client Vendor")
    assert assessment.questionnaire.key == "client-dd@1"
    page.fill("#id_contact_email", "security@client-vendor.test")
    submit(page, "form.invite-form button.primary")
    page.wait_for_selector(".messages")  # "A private link was sent to …"
    (invitation,) = [m for m in mailoutbox if m.to == ["security@client-vendor.test"]]
    link_path = re.search(r"/v/[\w-]+/", invitation.body).group(0)

    vendor = owner.context.new_page()
    vendor.goto(f"{live_server.url}{link_path}")
    if language == "zh-hant":
        submit(vendor, ".language-switch button[value='zh-hant']")
        assert vendor.get_attribute("html", "lang") == "zh-Hant-HK"
    vendor.goto(f"{live_server.url}{link_path}s/GOV/")
    if language == "zh-hant":  # English only, and said so
        assert "Do you keep an AI risk register?" in vendor.inner_text("main")
        assert vendor.locator(".english-only").is_visible()
    # two answers on the web page ...
    vendor.check("[id='q-GOV-01-yes']")
    vendor.check("[id='q-GOV-02-abroad']")
    vendor.click("#section-form button.primary")
    vendor.wait_for_selector(".message")
    assert not vendor.locator(".error-summary").count(), vendor.inner_text(".error-summary")
    owner.shot(vendor, "vendor-section")
    # ... and the third in the workbook: downloaded, typed into in "Excel", uploaded
    vendor.goto(f"{live_server.url}{link_path}workbook/")
    with vendor.expect_download() as download:
        vendor.click(f"a[download][hreflang='{language}']")
    typed = fill(Path(download.value.path()).read_bytes(), {"GOV-03": VENDOR["GOV-03"]})
    (tmp_path / "answers.xlsx").write_bytes(typed)
    vendor.set_input_files("input[type=file][name=workbook]", str(tmp_path / "answers.xlsx"))
    submit(vendor, "main form[enctype] button.primary")
    assert not vendor.locator(".error-summary").count(), vendor.inner_text(".error-summary")
    assert dict(assessment.answers.values_list("question_code", "value")) == VENDOR
    owner.shot(vendor, "vendor-workbook-imported")
    vendor.goto(f"{live_server.url}{link_path}review/")
    vendor.check("#confirm")
    submit(vendor, "main form[action$='/review/'] button[type=submit]")
    assert vendor.url.endswith("/thanks/")
    vendor.close()

    # the worker scores; the findings page shows the custom rule
    owner.go(f"/assessments/{assessment.pk}/findings/")
    deadline = time.monotonic() + SCORING_TIMEOUT
    while not page.locator(".score-big").count():
        assert time.monotonic() < deadline, "the worker did not score the assessment in time"
        page.wait_for_timeout(500)
        if not page.locator(".poll").count():
            page.reload()
    assert page.locator("#finding-DD-DATA-ABROAD").count() == 1
    assert "Customer data processed abroad" in page.inner_text("#finding-DD-DATA-ABROAD")
    assert page.locator("#finding-DD-NO-REGISTER").count() == 0
    assessment.refresh_from_db()
    assert assessment.latest_run.ruleset.key == "client-dd-rules@1"
    owner.shot(page, "findings")

    # a PDF in the page's language, generated by the worker, downloaded and read
    owner.go(f"/assessments/{assessment.pk}/reports/")
    page.select_option("select[name=language]", language)
    submit(page, "main form button.primary")
    deadline = time.monotonic() + REPORT_TIMEOUT
    download_link = page.locator("a[href$='/download/']")
    while not download_link.count():
        assert time.monotonic() < deadline, "the worker did not render the report in time"
        page.wait_for_timeout(1000)
    owner.shot(page, "report-ready")
    with page.expect_download() as download:
        download_link.click()
    pdf = Path(download.value.path()).read_bytes()
    text = " ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    flat = " ".join(text.split())
    assert "DD-DATA-ABROAD" in flat
    assert "client-dd@1" in flat
    if language == "zh-hant":
        assert "此問卷只有英文版本" in flat  # English only, marked
    else:
        assert "Client due diligence" in flat

    # -- version 2 of the rules: the impact on the case and the assessment, then publish ----
    owner.upload_yaml(tmp_path, RULES_V2, "client-dd-rules-v2.yaml")
    assert re.search(r"/catalogues/\d+/$", page.url), page.inner_text("main")[:2000]
    assert "client-dd-rules@2" in page.inner_text("h1")
    catalogue_v2 = page.url
    submit(page, "main a[href$='/workbench/impact/']")
    case_row = page.locator("#case-impact ~ table tr", has_text="No register, data abroad")
    assert "DD-LONG-RETENTION" in case_row.inner_text()  # added by the changed rule
    vendors = page.locator("section[aria-labelledby=assessment-impact] table")
    assert vendors.locator("thead th").first.inner_text() == VENDOR_COLUMN[language]
    vendor_row = vendors.locator("tbody tr", has_text="Client Vendor")
    assert "DD-LONG-RETENTION" in vendor_row.inner_text()
    owner.shot(page, "v2-impact")
    page.goto(catalogue_v2)
    submit(page, "main .actions a.button.primary")
    submit(page, "main form button.primary")
    page.wait_for_url(catalogue_v2)
    assert not Ruleset.objects.get(slug="client-dd-rules", version="2").is_draft
    owner.shot(page, "v2-published")

    assert owner.errors == []
    owner.context.close()
    print(f"\ncatalogue journey ({language}): {time.monotonic() - started:.1f} s")


@pytest.fixture(params=["en", "zh-hant"])
def language(request) -> str:
    return request.param
