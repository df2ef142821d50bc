"""The whole journey in real Chromium: an assessor creates an assessment and invites the vendor;
the vendor opens the private link, switches to Traditional Chinese, answers (a conditional
question appears), uploads a startup log, meets an inline error for a bad number and submits;
the Celery worker scores; the assessor reads the findings; a different user, the reviewer,
approves. Once with JavaScript (htmx), once without (plain form posts); the run with
JavaScript also filters the findings, records a risk acceptance, compares two vendors and checks
the main pages at phone width.

Screenshots of the main pages go to artifacts/screenshots/ (CI artefacts).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from accounts.models import User
from assessments.models import Assessment, Channel
from assessments.services.answers import assessment_create
from assessments.services.evidence import evidence_add
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_issue
from assessments.services.vendors import vendor_create
from questionnaires.models import QuestionnaireVersion
from tests.personas import PASSWORD, member_of

from .conftest import DESKTOP, PHONE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = json.loads((ROOT / "examples" / "incident-2026-launch.json").read_text("utf-8"))
REMEDIATED = json.loads((ROOT / "examples" / "incident-2026-remediated.json").read_text("utf-8"))
LOG = ROOT / "tests" / "fixtures" / "logs" / "sglang-prefill-glm53-launch.log"
VENDOR_SECTIONS = ["PRF", "CTX", "KV", "ISO", "CHG", "INC", "GOV"]
SCORING_TIMEOUT = 60


class Journey:
    """Helpers shared by the steps: screenshots and waiting, with or without JavaScript."""

    def __init__(self, browser, base_url: str, folder: Path, *, javascript: bool) -> None:
        self.browser = browser
        self.base_url = base_url
        self.folder = folder
        self.javascript = javascript
        self.prefix = "" if javascript else "nojs-"

        self.policy_violations: list[str] = []

    def context(self):
        context = self.browser.new_context(
            viewport=DESKTOP, java_script_enabled=self.javascript, locale="en-GB"
        )
        # The content security policy is enforced: anything inline (an htmx swap included)
        # would be blocked and reported in the console.
        context.on(
            "console",
            lambda message: (
                self.policy_violations.append(message.text)
                if "Content Security Policy" in message.text
                else None
            ),
        )
        return context

    def shot(self, page, name: str, *, full_page: bool = True) -> None:
        path = self.folder / f"{self.prefix}{name}.png"
        page.screenshot(path=str(path), full_page=full_page)

    def phone_shot(self, page, name: str) -> None:
        """The page at phone width: saved, and it must not scroll sideways."""
        page.set_viewport_size(PHONE)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 1, f"{name} is {width}px wide on a phone"
        page.screenshot(path=str(self.folder / f"{self.prefix}phone-{name}.png"), full_page=True)
        page.set_viewport_size(DESKTOP)

    def sign_in(self, user: User):
        page = self.context().new_page()
        page.goto(f"{self.base_url}/accounts/login/")
        page.fill("input[name=username]", user.email)
        page.fill("input[name=password]", PASSWORD)
        page.click("main form button[type=submit]")
        assert page.url.rstrip("/") == self.base_url, page.url
        return page


def fill_question(page, question, value) -> None:
    """Answer one question of the vendor portal the way a person would."""
    if question.type in ("yes_no", "choice", "multi_choice"):
        for option in value if isinstance(value, list) else [value]:
            page.check(f"[id='q-{question.code}-{option}']")
    else:
        page.fill(f"[id='q-{question.code}']", str(value))


def answer_section(page, journey: Journey, spec, section: str) -> None:
    """Fill every question of the section the launch example answers, as far as it is shown,
    and save; save again if the answers made another question appear."""
    answers = {
        q.code: LAUNCH["answers"][q.code]
        for q in spec.section(section).questions
        if q.code in LAUNCH["answers"]
    }
    done: set[str] = set()
    # Questions whose answer shows or hides others (htmx redraws the questions when they change).
    controlling = (
        set(
            page.eval_on_selector_all(
                "[data-controls-visibility]", "els => els.map(e => e.id.replace('question-', ''))"
            )
        )
        if journey.javascript
        else set()
    )
    for _round in range(3):
        todo = [
            code
            for code in answers
            if code not in done and page.locator(f"[name='{code}']").count()
        ]
        if not todo:
            return
        for code in todo:
            fill_question(page, spec.questions[code], answers[code])
            if code in controlling:
                # htmx keeps the draft (as typed: after a pause) and redraws the questions
                # this answer shows or hides; a person reads them before typing on
                page.wait_for_timeout(900)
                page.wait_for_function("() => !document.querySelector('.htmx-request')")
            if journey.javascript and code == "PRF-07":
                page.wait_for_selector("#q-PRF-08")  # appears without a reload
            done.add(code)
        page.click("#section-form button.primary")
        page.wait_for_selector(".message")  # "Saved." (in the page's language)
        assert not page.locator(".error-summary").count(), page.locator(
            ".error-summary"
        ).inner_text()


def wait_until_scored(page, timeout: float = SCORING_TIMEOUT) -> None:
    """The findings page polls (htmx) and reloads itself when the worker is done; without
    JavaScript a person reloads it."""
    deadline = time.monotonic() + timeout
    while not page.locator(".score-big").count():
        assert time.monotonic() < deadline, "the worker did not score the assessment in time"
        page.wait_for_timeout(500)
        if not page.locator(".poll").count():
            page.reload()
        elif page.locator(".score-big").count() == 0:
            page.wait_for_load_state()


def submitted_neighbour(personas) -> Assessment:
    """A second vendor, remediated, already submitted: the worker scores it while the journey
    runs, so the comparison has two scored assessments."""
    vendor = vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="Remediated AI"
    )
    key = f"{REMEDIATED['questionnaire']}@{REMEDIATED['version']}"
    assessment = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=key,
        actor=personas.alice,
        channel=Channel.WEB,
        answers=REMEDIATED["answers"],
    )
    log = ROOT / "tests" / "fixtures" / "logs" / "sglang-prefill-glm53-remediated.log"
    evidence_add(
        assessment=assessment,
        question_code="CTX-08",
        upload=SimpleUploadedFile(log.name, log.read_bytes()),
        actor=personas.alice,
        channel=Channel.WEB,
    )
    with transaction.atomic():
        assessment_submit(assessment=assessment, actor=personas.alice, channel=Channel.WEB)
    return assessment


@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "no-javascript"])
def test_the_whole_journey(
    live_server, worker, personas, mailoutbox, chromium, screenshots, javascript
):
    spec = QuestionnaireVersion.objects.get(version=LAUNCH["version"]).spec
    neighbour = submitted_neighbour(personas) if javascript else None
    journey = Journey(chromium, live_server.url, screenshots, javascript=javascript)

    # -- the assessor adds the vendor, creates the assessment and invites the vendor ----------
    assessor = journey.sign_in(personas.ava)
    if javascript:
        assessment = create_and_invite(assessor, journey)
    else:
        # (the same member pages as plain forms are covered in tests/web; here the point is
        # the vendor portal without JavaScript)
        assessment = created_and_invited(personas)

    # (the members' own invitations, sent when the personas were made, are not the vendor's)
    (invitation,) = [m for m in mailoutbox if m.to == ["kv-team@workers-ai.test"]]
    link_path = re.search(r"/v/[\w-]+/", invitation.body).group(0)

    # -- the vendor answers through the private link -----------------------------------------
    vendor = journey.context().new_page()
    vendor.goto(f"{live_server.url}{link_path}")
    vendor.click(".language-switch button[value='zh-hant']")
    assert vendor.get_attribute("html", "lang") == "zh-Hant-HK"
    assert "AI 推論服務租戶隔離問卷" in vendor.inner_text("h1")
    journey.shot(vendor, "vendor-landing-zh")

    for section in VENDOR_SECTIONS:
        vendor.goto(f"{live_server.url}{link_path}s/{section}/")
        if section == "PRF":
            assert vendor.locator("#q-PRF-08").count() == 0  # shown only once PRF-07 = yes
        if section == "CTX":
            vendor.fill("#q-CTX-01", "1M")
            vendor.click("#section-form button.primary")
            assert vendor.locator("#q-CTX-01_error").is_visible()  # inline, beside the field
            assert vendor.locator(".error-summary").is_visible()
            assert vendor.input_value("#q-CTX-01") == "1M"
            journey.shot(vendor, "vendor-inline-error")
        answer_section(vendor, journey, spec, section)
        if section == "PRF":
            assert vendor.locator("#q-PRF-08").count() == 1
            journey.shot(vendor, "vendor-section-prf")
        if section == "CTX":
            vendor.set_input_files("#q-CTX-08-file", str(LOG))
            vendor.click("#q-CTX-08-upload")
            vendor.wait_for_selector("#evidence-CTX-08 .parse-result")
            assert LOG.name in vendor.inner_text("#evidence-CTX-08")
            journey.shot(vendor, "vendor-evidence-uploaded")

    # meanwhile the assessor follows the vendor's progress
    assessor.goto(f"{live_server.url}/assessments/{assessment.pk}/")
    assert "6 of 6" in assessor.inner_text("#progress")  # CTX: every required question
    journey.shot(assessor, "assessment-progress")

    vendor.goto(f"{live_server.url}{link_path}review/")
    assert vendor.locator("#answers-CTX").count() == 1  # every answer, before the submit
    vendor.check("#confirm")
    vendor.click("main form[action$='/review/'] button[type=submit]")
    assert vendor.url.endswith("/thanks/")
    journey.shot(vendor, "vendor-submitted")

    # -- the worker scores; the assessor reads the findings ------------------------------------
    assessor.goto(f"{live_server.url}/assessments/{assessment.pk}/findings/")
    wait_until_scored(assessor)
    assert "CRITICAL" in assessor.inner_text(".score-big").upper()
    assert "100/100" in assessor.inner_text(".score-big")
    assert assessor.locator("#finding-KV-POOL-BELOW-CONTEXT").count() == 1
    assert assessor.locator("#finding-LOG-POOL-BELOW-CONTEXT").count() == 1  # from the log
    assert "line 42" in assessor.inner_text("#finding-LOG-POOL-BELOW-CONTEXT")
    journey.shot(assessor, "findings", full_page=False)
    assessor.goto(f"{live_server.url}/assessments/{assessment.pk}/review/")
    assert "your role is Assessor" in assessor.inner_text("#review-blockers")
    if javascript:
        assessor_extras(assessor, journey, assessment)

    # -- a different user, the reviewer, approves --------------------------------------------
    reviewer = journey.sign_in(personas.rex)
    reviewer.goto(f"{live_server.url}/assessments/{assessment.pk}/review/")
    assert reviewer.locator("#review-blockers").count() == 0
    reviewer.check("input[name='decision'][value='approved_with_conditions']")
    reviewer.fill("#id_conditions", "Prompts under 128,000 tokens until the KV pool is enlarged.")
    # The critical findings are named, and each must be confirmed before approving.
    boxes = reviewer.locator("input[name='acknowledged_findings']")
    assert boxes.count() >= 1
    assert "KV-POOL-BELOW-CONTEXT" in reviewer.inner_text("#field-id_acknowledged_findings")
    for index in range(boxes.count()):
        boxes.nth(index).check()
    reviewer.click("main form button.primary")
    assert "Decision recorded: Approved with conditions." in reviewer.inner_text(".messages")
    assert reviewer.locator("#review-blockers").count() == 0
    decided = reviewer.inner_text("#review-decided")
    assert "Signed off: Approved with conditions" in decided
    assert "Prompts under 128,000 tokens" in decided
    journey.shot(reviewer, "review-approved-with-conditions")
    assessment.refresh_from_db()
    assert assessment.status == "approved"
    assert assessment.reviews.get().reviewer == personas.rex
    if javascript:
        overview_extras(reviewer, journey, assessment, neighbour)
    assert journey.policy_violations == []


def create_and_invite(assessor, journey: Journey) -> Assessment:
    """Through the pages: a vendor, an assessment with the buyer's answers, an invitation."""
    assessor.click("nav.main-nav >> text=Vendors")
    assessor.click("text=Add a vendor")
    assessor.fill("#id_name", "Workers AI")
    assessor.fill("#id_contact_name", "KV Team")
    assessor.fill("#id_contact_email", "kv-team@workers-ai.test")
    assessor.click("main form button.primary")
    assert "Workers AI" in assessor.inner_text("main")
    journey.shot(assessor, "vendors")

    assessor.click("nav.main-nav >> text=Assessments")
    assessor.click("text=New assessment")
    # The vendors are found by name (an organization may hold thousands): htmx redraws the
    # list as the name is typed.
    with assessor.expect_response(lambda response: "q=Workers" in response.url):
        assessor.fill("#id_vendor_q", "Workers")
    assert assessor.locator("#vendor-choices input[name=vendor]").count() == 1
    assessor.get_by_label("Workers AI", exact=True).check()
    # The newest version (v3) is offered first; this journey answers the v1 launch-day file.
    key = f"{LAUNCH['questionnaire']}@{LAUNCH['version']}"
    with assessor.expect_response(lambda response: "questionnaire=" in response.url):
        assessor.select_option("#id_questionnaire", key)
    assessor.fill("#id_due_date", "2030-12-31")
    for code in ("USE-01", "USE-02", "USE-04", "USE-05"):
        assessor.check(f"input[name='{code}'][value='{LAUNCH['answers'][code]}']")
    assessor.fill("#q-USE-03", "750k")  # a typing mistake, caught beside the field
    assessor.click("main form button.primary")
    assert assessor.locator("#q-USE-03_error").is_visible()
    assert assessor.locator(".error-summary a[href='#q-USE-03']").count() == 1
    journey.shot(assessor, "new-assessment-error")
    assessor.fill("#q-USE-03", "750,000")
    assessor.click("main form button.primary")
    assert "Invite a vendor contact" in assessor.inner_text("main")
    assert assessor.input_value("#id_contact_email") == "kv-team@workers-ai.test"
    assessor.click("form.invite-form button.primary")
    assert "A private link was sent to kv-team@workers-ai.test" in assessor.inner_text(".messages")
    journey.shot(assessor, "assessment-invited")
    return Assessment.objects.get(vendor__name="Workers AI")


def created_and_invited(personas) -> Assessment:
    """The same, through the services."""
    vendor = vendor_create(
        organization=personas.acme, actor=personas.ava, channel=Channel.WEB, name="Workers AI"
    )
    assessment = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=f"{LAUNCH['questionnaire']}@{LAUNCH['version']}",
        actor=personas.ava,
        channel=Channel.WEB,
        answers={k: v for k, v in LAUNCH["answers"].items() if k.startswith("USE-")},
    )
    vendor_link_issue(
        assessment=assessment,
        contact_email="kv-team@workers-ai.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )  # the email goes out when the transaction commits
    return assessment


def assessor_extras(assessor, journey: Journey, assessment: Assessment) -> None:
    """Filters, a risk acceptance, the page at phone width."""
    assessor.goto(f"{journey.base_url}/assessments/{assessment.pk}/findings/")
    assessor.select_option("#id_framework", "HK-PDPO-DPP4-1")
    # htmx re-draws the results and puts the filter in the address
    assessor.wait_for_url(re.compile(r"framework=HK-PDPO-DPP4-1"))
    assessor.wait_for_selector("text=Citing HK-PDPO-DPP4-1")
    shown = assessor.locator("li.finding").count()
    assert 0 < shown < Assessment.objects.get(pk=assessment.pk).latest_run.findings.count()
    assert assessor.locator("li.finding .badge:has-text('as summarised')").count()
    journey.shot(assessor, "findings-filtered")

    # a risk acceptance is recorded against a finding; the finding stays
    finding = assessor.locator("#finding-KV-POOL-BELOW-CONTEXT")
    finding.locator("details.decision-form summary").click()
    finding.locator("input[value='acceptance']").check()
    finding.locator("textarea[name='justification']").fill("Prompts capped at 200,000 tokens.")
    finding.locator("input[name='owner']").fill("Head of Procurement")
    finding.locator("input[name='expires_on']").fill("2031-06-30")
    finding.locator("details.decision-form button.primary").click()
    assert "Risk acceptance" in assessor.inner_text("#finding-KV-POOL-BELOW-CONTEXT")
    journey.phone_shot(assessor, "findings")


def overview_extras(page, journey: Journey, assessment: Assessment, neighbour) -> None:
    """The dashboard, and a comparison with the remediated vendor; both at phone width too."""
    page.goto(journey.base_url)
    journey.shot(page, "dashboard")
    journey.phone_shot(page, "dashboard")
    neighbour.refresh_from_db()
    assert neighbour.status == "scored", "the worker should have scored it by now"
    page.goto(
        f"{journey.base_url}/assessments/compare/"
        f"?assessments={assessment.pk}&assessments={neighbour.pk}"
    )
    assert page.locator("svg.coverage-chart").count() == 1
    assert "KV-POOL-BELOW-CONTEXT" in page.inner_text("main")
    journey.shot(page, "compare")
    journey.phone_shot(page, "compare")
