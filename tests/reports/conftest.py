"""Fixtures of the report tests: personas, the catalogue, a scored incident assessment built
through the real services, and the incident's report rendered once per test session in both
languages (real WeasyPrint; the Celery task runs eagerly in this process).

Integration with a real Redis and worker is covered by tests/integration.
"""

from __future__ import annotations

import io
import json
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pypdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import transaction
from django.test import TestCase, override_settings

from accounts.services import organization_update_branding
from assessments import factories
from assessments.models import Assessment, Channel
from assessments.services.reviews import review_record
from questionnaires.models import QuestionnaireVersion
from reports.context import report_context
from reports.models import Report
from reports.rendering import report_html
from reports.services import report_request
from scoring.models import Framework, Ruleset
from tests.personas import Personas, make_personas, member_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "examples" / "incident-2026-launch.json").read_text(encoding="utf-8"))
LOGS = ROOT / "tests" / "fixtures" / "logs"
LOG = LOGS / "sglang-prefill-glm53-launch.log"
ARTIFACTS = ROOT / "artifacts" / "reports"
QUESTIONNAIRE = "ai-inference-isolation@1"
VENDOR = "Cloud Inference Co"
CONDITIONS = "Short prompts only (under 128,000 tokens) until SGLang is upgraded to v0.5.22."
# The consultancy's logo on the incident report: a static SVG drawing, as branding accepts.
LOGO_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="60" viewBox="0 0 240 60">'
    b'<rect width="60" height="60" rx="8" fill="#1A5FB4"/>'
    b'<path d="M12 46 L30 14 L48 46 Z" fill="#ffffff"/>'
    b'<rect x="72" y="22" width="150" height="16" rx="4" fill="#9DB7DC"/></svg>'
)


# -- building blocks (plain functions, so session fixtures can use them too) ---------------


def log_upload(path: Path = LOG) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/plain")


def make_scored_assessment(
    personas: Personas,
    *,
    vendor_name: str = VENDOR,
    answers: dict | None = None,
    comments: dict | None = None,
    logs: tuple[Path, ...] = (LOG,),
) -> Assessment:
    """The launch-day incident vendor of Acme, answered and submitted by ava, scored."""
    member = member_of(personas.ava)
    assessment = factories.incident_assessment(
        member=member,
        vendor=factories.incident_vendor(member=member, name=vendor_name),
        answers=answers,
        comments=comments,
        evidence=tuple((factories.EVIDENCE_QUESTION, path) for path in logs),
    )
    assert assessment.status == "scored", assessment.status
    return assessment


def run_on_commit():
    """Tests never commit, and the services queue tasks on commit: this block runs what was
    queued inside it when it ends (eagerly, with CELERY_TASK_ALWAYS_EAGER)."""
    return TestCase.captureOnCommitCallbacks(execute=True)


def load_catalog() -> None:
    call_command("load_catalog", stdout=io.StringIO())


def pdf_text(pdf: bytes) -> list[str]:
    """The text of every page, as a reader's copy and paste would give it."""
    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def heading_texts(html: str) -> tuple[str, ...]:
    """The text of each h1-h4 of an HTML document, whitespace collapsed."""

    class Headings(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.found: list[str] = []
            self.depth = 0

        def handle_starttag(self, tag: str, attrs: object) -> None:
            if tag in ("h1", "h2", "h3", "h4"):
                self.depth += 1
                self.found.append("")

        def handle_endtag(self, tag: str) -> None:
            if tag in ("h1", "h2", "h3", "h4"):
                self.depth -= 1

        def handle_data(self, data: str) -> None:
            if self.depth:
                self.found[-1] += data

    parser = Headings()
    parser.feed(html)
    return tuple(" ".join(text.split()) for text in parser.found if text.strip())


def render_first_page_png(pdf_path: Path, prefix: Path, page: int = 1, dpi: int = 50) -> Path:
    """`pdftoppm -r 50 -f 1 -l 1`: a page (the first) as a PNG (the CI artefact); fails on any
    error."""
    subprocess.run(
        ["pdftoppm", "-r", str(dpi), "-f", str(page), "-l", str(page), "-png", "-singlefile"]
        + [str(pdf_path), str(prefix)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return prefix.with_suffix(".png")


# -- per test ------------------------------------------------------------------------------


@pytest.fixture(scope="package")
def _catalog_once(django_db_setup, django_db_blocker):
    """`load_catalog` once for this package; removed again afterwards (it commits)."""
    with django_db_blocker.unblock():
        ours = not (QuestionnaireVersion.objects.exists() or Ruleset.objects.exists())
        if ours:
            load_catalog()
    yield
    if ours:
        with django_db_blocker.unblock():
            Ruleset.objects.all().delete()
            QuestionnaireVersion.objects.all().delete()
            Framework.objects.all().delete()


@pytest.fixture
def catalog(_catalog_once, db) -> None:
    """The questionnaire, ruleset and framework catalogue."""


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def inline_tasks(settings):
    """`with inline_tasks(): ...` runs the Celery tasks queued (on commit) inside the block,
    eagerly, in this process when the block ends."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return run_on_commit


@pytest.fixture
def scored(catalog, personas, inline_tasks) -> Assessment:
    return make_scored_assessment(personas)


@pytest.fixture
def ready_report(scored, personas, inline_tasks) -> Report:
    """A ready English report of the scored assessment, requested by ava."""
    with inline_tasks():
        report = report_request(
            assessment=scored, language="en", member=member_of(personas.ava), channel=Channel.WEB
        )
    report.refresh_from_db()
    assert report.status == "ready", report.error
    return report


# -- the incident report, rendered once per session ---------------------------------------


@dataclass(frozen=True)
class RenderedEdition:
    language: str
    pdf: bytes
    pages: int
    number: str
    sha256: str
    fired_rule_ids: tuple[str, ...]
    tier: str
    png: Path
    headings: tuple[str, ...] = ()  # the text of every h1-h4 of the report's HTML


@pytest.fixture(scope="session")
def incident_reports(django_db_setup, django_db_blocker, tmp_path_factory):
    """The incident's report in both editions, through the real request → task → render path.

    Built in a transaction that is rolled back afterwards, so no test sees its rows; the tests
    read only the bytes and a few facts about them. Page 1 of each edition is rendered with
    pdftoppm and kept under artifacts/reports/ for CI.
    """
    from django.db import connection

    with django_db_blocker.unblock():
        name = str(connection.settings_dict["NAME"])
    # Only ever a test database (pytest-django sets one up when a selected test uses the
    # database; the modules that use this fixture are marked django_db).
    assert "test" in name or "memory" in name, f"not a test database: {name}"
    media = tmp_path_factory.mktemp("report-media")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    editions: dict[str, RenderedEdition] = {}
    with (
        django_db_blocker.unblock(),
        override_settings(CELERY_TASK_ALWAYS_EAGER=True, MEDIA_ROOT=media),
        transaction.atomic(),
    ):
        if not Ruleset.objects.exists():
            load_catalog()
        personas = make_personas()
        organization_update_branding(
            organization=personas.acme,
            actor=personas.alice,
            report_display_name="Kowloon Risk Advisory",
            brand_colour="#1A5FB4",
            logo=LOGO_SVG,
        )
        assessment = make_scored_assessment(personas)
        review_record(
            assessment=assessment,
            member=member_of(personas.rex),
            decision="approved_with_conditions",
            conditions=CONDITIONS,
            acknowledged_findings=factories.critical_rule_ids(assessment),
            channel=Channel.WEB,
        )
        fired = tuple(assessment.latest_run.findings.values_list("rule_id", flat=True))
        for language in ("en", "zh-hant"):
            with run_on_commit():
                report = report_request(
                    assessment=assessment,
                    language=language,
                    member=member_of(personas.rex),
                    channel="web",
                )
            report.refresh_from_db()
            assert report.status == "ready", report.error
            from reports.services import report_file

            pdf = report_file(report=report)
            pdf_path = ARTIFACTS / f"incident-{language}.pdf"
            pdf_path.write_bytes(pdf)
            png = render_first_page_png(pdf_path, ARTIFACTS / f"incident-{language}-page1")
            editions[language] = RenderedEdition(
                language=language,
                pdf=pdf,
                pages=report.pages,
                number=report.number,
                sha256=report.sha256,
                fired_rule_ids=fired,
                tier=assessment.latest_run.risk_tier,
                png=png,
                headings=heading_texts(
                    report_html(
                        report_context(run=report.run, language=language, number=report.number)
                    )
                ),
            )
        transaction.set_rollback(True)
    return editions


@pytest.fixture(params=["en", "zh-hant"])
def edition(request, incident_reports):
    """Each edition of the incident report in turn."""
    return incident_reports[request.param]
