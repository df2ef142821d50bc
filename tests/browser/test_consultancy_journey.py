"""A consultancy's practice in real Chromium (issue 27), once in English and once in Traditional
Chinese (the consultant switches the language as a person would): the consultancy's owner signs
in, opens two client workspaces from the web, copies a vendor and the reassessment policy from
the first client to the second; in each client an assessment is scored by the Celery worker and
an assessment PDF, rendered by the worker, is downloaded and read: it names the client and the
consultancy that prepared it, and its number runs per organization. Then a portfolio PDF of a
client and the consultancy's overview across its clients, and last, nothing of the first client
is reachable from the second.

The assessments themselves are set up through the services (the pages that create and answer
them are walked in test_journey.py); the submission is scored by the real worker.
Screenshots go to artifacts/screenshots/consultancy-*.png.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pypdf
import pytest
from django.db import transaction

from accounts.models import OrganizationKind, User
from accounts.services import organization_create, organization_update_branding
from accounts.tenancy import org_context_of
from assessments import factories
from assessments.models import Assessment, Channel, Vendor
from assessments.services.reassessment import reassessment_policy_for, reassessment_policy_update
from assessments.services.submission import assessment_submit
from tests.personas import PASSWORD

from .conftest import DESKTOP
from .test_journey import wait_until_scored

pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
]

CONSULTANCY = "Helix Advisory"
CLIENT_A, CLIENT_B = "Blue Bank", "Green Grocer"
BRAND_A = "Blue Bank plc"  # the name client A's reports show
POLICY = {"critical": 30, "high": 61, "medium": 92, "low": 123}
RENDER_TIMEOUT_MS = 90_000  # the worker renders the PDF (WeasyPrint) on a shared 2-core box
# what the pages say in each language (the PDFs are asked for in the page's language)
WORDS = {
    "en": {"lang": "en", "report": "en", "prepared_by": "Prepared by: "},
    "zh-hant": {"lang": "zh-Hant-HK", "report": "zh-hant", "prepared_by": "編製機構："},
}


class Consultant:
    """One browser context (one person) and what the journey needs from it."""

    def __init__(self, browser, base_url: str, folder: Path, language: str) -> None:
        self.base_url = base_url
        self.folder = folder
        self.language = language
        self.context = browser.new_context(viewport=DESKTOP, locale="en-GB", accept_downloads=True)
        self.page = self.context.new_page()

    def shot(self, name: str) -> None:
        self.page.screenshot(
            path=str(self.folder / f"consultancy-{self.language}-{name}.png"), full_page=True
        )

    def go(self, path: str):
        return self.page.goto(f"{self.base_url}{path}")

    def switch_to(self, organization: str) -> None:
        """The organization switcher in the header."""
        self.page.select_option("#org-switcher-select", label=organization)
        self.page.click("form.org-switcher button[type=submit]")
        assert organization in self.page.inner_text("#org-switcher-select option:checked")

    def pdf_when_ready(self, download_link: str = "#report-state a.button") -> tuple[str, str]:
        """On a report's status page (which polls while the worker renders): wait for the
        download, click it and read the PDF. Returns the report's number and the PDF's text."""
        number = re.search(r"AVIA-\d{4}-\d{6}", self.page.inner_text("h1")).group(0)
        self.page.wait_for_selector(download_link, timeout=RENDER_TIMEOUT_MS)
        with self.page.expect_download() as download:
            self.page.click(download_link)
        data = Path(download.value.path()).read_bytes()
        assert data.startswith(b"%PDF-")
        reader = pypdf.PdfReader(io.BytesIO(data))
        return number, " ".join(page.extract_text() for page in reader.pages)


def squashed(text: str) -> str:
    return "".join(text.split())


@pytest.fixture
def helix(worker, settings) -> User:  # noqa: ARG001  (the worker scores and renders)
    """Helix Advisory, a consultancy, and Hana its owner, who signs in through the login page
    (with the quick password hasher of tests/browser/conftest.py's personas)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    consultancy = organization_create(
        name=CONSULTANCY, owner_email="hana@helix.test", kind=OrganizationKind.CONSULTANCY
    )
    hana = consultancy.memberships.get().user
    hana.set_password(PASSWORD)
    hana.save(update_fields=["password"])
    return hana


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_a_consultancy_serves_two_clients(live_server, helix, chromium, screenshots, language):
    words = WORDS[language]
    hana = helix
    person = Consultant(chromium, live_server.url, screenshots, language)
    page = person.page

    # -- signs in, switches language ---------------------------------------------------------
    person.go("/accounts/login/")
    page.fill("input[name=username]", hana.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    assert page.url.rstrip("/") == live_server.url, page.url
    if language != "en":
        page.click(f".language button[value='{language}']")
    assert page.get_attribute("html", "lang") == words["lang"]

    # -- opens two client workspaces from the web ---------------------------------------------
    for name in (CLIENT_A, CLIENT_B):
        page.click("nav.main-nav a[href$='/clients/']")
        page.fill("#id_name", name)
        page.click("main form button.primary")
        # the new workspace is the session's, and its members page is where its people are invited
        assert re.search(r"/orgs/[\w-]+/members/$", page.url), page.url
        assert name in page.inner_text("#org-switcher-select option:checked")
    client_a = hana.memberships.get(organization__name=CLIENT_A).organization
    client_b = hana.memberships.get(organization__name=CLIENT_B).organization
    page.click("nav.main-nav a[href$='/clients/']")
    clients_text = page.inner_text("table.clients")
    assert CLIENT_A in clients_text and CLIENT_B in clients_text
    person.shot("clients")

    # Client A's brand, vendor, assessment and reassessment policy (through the services).
    in_a = org_context_of(user=hana, organization=client_a)
    organization_update_branding(
        organization=client_a, actor=hana, report_display_name=BRAND_A, brand_colour="#123456"
    )
    assessment_a = factories.incident_assessment(member=in_a, submit=False)
    reassessment_policy_update(member=in_a, days=POLICY, channel=Channel.WEB)
    vendor_name = assessment_a.vendor.name

    # -- copies the vendor and the policy from A to B -----------------------------------------
    page.click(f"table.clients tr:has(th:text-is('{CLIENT_B}')) a[href$='/copy/']")
    page.click(f"main ul.plain a:text-is('{CLIENT_A}')")
    assert f"from={client_a.slug}" in page.url
    page.get_by_label(vendor_name, exact=True).check()
    page.check("input[name=policy]")
    page.click("main form button.primary")
    assert vendor_name in page.inner_text(".messages")
    person.shot("copied")
    copied = Vendor.objects.get(organization=client_b, name=vendor_name)
    assert copied.pk != assessment_a.vendor.pk  # a copy, never a link
    policy_b = reassessment_policy_for(organization=client_b)
    assert {tier: getattr(policy_b, f"{tier}_days") for tier in POLICY} == POLICY

    # Client B's assessment of the copied vendor; both submitted, and the worker scores them.
    in_b = org_context_of(user=hana, organization=client_b)
    assessment_b = factories.incident_assessment(member=in_b, vendor=copied, submit=False)
    for assessment, member in ((assessment_a, in_a), (assessment_b, in_b)):
        with transaction.atomic():  # queued for the worker when it commits
            assessment_submit(assessment=assessment, actor=member.user, channel=Channel.WEB)

    # -- in each client: the scored assessment and its PDF ------------------------------------
    numbers = {}
    for client, assessment in ((client_a, assessment_a), (client_b, assessment_b)):
        person.switch_to(client.name)
        person.go(f"/assessments/{assessment.pk}/findings/")
        wait_until_scored(page)
        # the assessment's page offers the report of its latest scoring run
        person.go(f"/assessments/{assessment.pk}/")
        page.select_option("#report-language", words["report"])
        page.click("form.report-request button.primary")
        assert re.search(r"/reports/\d+/$", page.url), page.url
        number, text = person.pdf_when_ready()
        person.shot(f"report-{client.slug}")
        # the cover: the client's brand, then "prepared by" the consultancy
        brand = BRAND_A if client == client_a else CLIENT_B
        assert squashed(f"{brand}{words['prepared_by']}{CONSULTANCY}") in squashed(text), number
        assert number in squashed(text)
        numbers[client.name] = number
    # numbers run per organization: each client's first report is its number one
    assert all(number.endswith("-000001") for number in numbers.values()), numbers

    # -- a portfolio PDF of client B ----------------------------------------------------------
    person.go("/")  # B is the session's organization
    page.select_option("#portfolio-report-language", words["report"])
    page.click("form.report-request[action$='/portfolio-reports/'] button.primary")
    assert re.search(r"/portfolio-reports/\d+/$", page.url), page.url
    number, text = person.pdf_when_ready()
    person.shot("portfolio")
    flat = squashed(text)
    assert squashed(f"{CLIENT_B}{words['prepared_by']}{CONSULTANCY}") in flat
    assert squashed(vendor_name) in flat and number in flat
    assert number == numbers[CLIENT_B].replace("-000001", "-000002")  # B's sequence goes on
    assert squashed(CLIENT_A) not in flat

    # -- the consultancy's overview across its clients ----------------------------------------
    person.switch_to(CONSULTANCY)
    person.go("/")
    page.click("a[href$='/portfolio-reports/clients/']")
    overview = page.inner_text("main")
    assert CLIENT_A in overview and CLIENT_B in overview
    assert vendor_name not in overview  # each client's figures, never its vendors
    person.shot("overview")
    page.select_option("main form.report-request select[name=language]", words["report"])
    page.click("main form.report-request button.primary")
    assert re.search(r"/portfolio-reports/\d+/$", page.url), page.url
    number, text = person.pdf_when_ready()
    flat = squashed(text)
    assert squashed(CLIENT_A) in flat and squashed(CLIENT_B) in flat
    assert squashed(CONSULTANCY) in flat and number in flat
    assert number.endswith("-000001")  # the consultancy's own first report
    assert squashed(vendor_name) not in flat

    # -- nothing of client A is reachable from client B ---------------------------------------
    person.switch_to(CLIENT_B)
    report_a = assessment_a.reports.get()
    for path in (
        f"/assessments/{assessment_a.pk}/",
        f"/assessments/{assessment_a.pk}/findings/",
        f"/assessments/{assessment_a.pk}/reports/",
        f"/reports/{report_a.pk}/",
        f"/reports/{report_a.pk}/download/",
    ):
        response = person.go(path)
        assert response.status == 404, f"{path} answered {response.status} in {CLIENT_B}"
        assert vendor_name not in page.inner_text("body")
    person.shot("client-a-not-found-from-b")
    assert Assessment.objects.filter(organization=client_b).count() == 1
    person.context.close()
