"""`manage.py load_demo_catalogue`: after `load_demo`, the demo organization gets its own
questionnaire, hk-genai-provider v1, an example provider's assessment scored with it, and the
assessment's PDF report in English and in Traditional Chinese (real PDFs, read back)."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import call_command

from assessments.models import Assessment
from portfolio.management.commands import load_demo_catalogue as command
from reports.models import ReportStatus
from reports.services import report_file
from scoring.engine import CompiledRuleset
from scoring.registry import Catalog
from scoring.services import catalog_load
from scoring.spec import load_frameworks_file
from tests.reports.conftest import pdf_text


def publish_like_load_catalog(*, owner, document=command.DOCUMENT) -> str:
    """A stand-in for the organization path while it is not connected: the same document,
    loaded with the shipped catalogue's service."""
    parsed = command.read_catalogue_document(document)
    q, r = parsed.questionnaire, parsed.ruleset
    catalog_load(
        catalog=Catalog(
            frameworks={**load_frameworks_file(), **parsed.frameworks},
            questionnaires={q.key: q},
            rulesets={r.key: r},
            raw={
                ("questionnaire", q.key): parsed.raw["questionnaire"],
                ("ruleset", r.key): parsed.raw["ruleset"],
            },
        )
    )
    return q.key


def run(name: str) -> str:
    out = io.StringIO()
    call_command(name, stdout=out)
    return out.getvalue()


def test_before_load_demo_it_says_what_to_run(db):
    with pytest.raises(Exception, match="load_demo"):
        run("load_demo_catalogue")


def test_unconnected_it_loads_nothing_and_says_so(catalog):
    run("load_demo")
    assert "not loaded" in run("load_demo_catalogue")
    assert not Assessment.objects.filter(vendor__name=command.VENDOR_NAME).exists()


def test_the_demo_scores_the_example_and_renders_both_pdfs(catalog, monkeypatch):
    monkeypatch.setattr(command, "publish_demo_catalogue", publish_like_load_catalog)
    run("load_demo")
    output = run("load_demo_catalogue")

    assessment = Assessment.objects.get(vendor__name=command.VENDOR_NAME)
    assert assessment.questionnaire.key == "hk-genai-provider@1"
    # The tier the engine gives the example's answers, computed here from the document.
    parsed = command.read_catalogue_document()
    engine = CompiledRuleset(parsed.ruleset, parsed.questionnaire)
    answers = {a.question_code: a.value for a in assessment.answers.all()}
    expected = engine.score(answers, as_of=dt.date.today())
    assert (assessment.risk_tier, assessment.risk_score) == (
        expected.risk_tier,
        expected.risk_score,
    )
    assert f"{assessment.risk_tier} ({assessment.risk_score}/100)" in output

    reports = {r.language: r for r in assessment.reports.all()}
    assert set(reports) == {"en", "zh-hant"}
    assert all(r.status == ReportStatus.READY for r in reports.values())
    english = " ".join(pdf_text(report_file(report=reports["en"])))
    chinese = " ".join(pdf_text(report_file(report=reports["zh-hant"])))
    assert "GENAI-NO-AUDIT-RIGHTS-FOR-REGULATED-BUYER" in english
    assert "as summarised" in english
    assert "受規管的採購方沒有審計權或資訊索取權" in chinese.replace("\n", "")

    assert "already present" in run("load_demo_catalogue")  # idempotent
    assert Assessment.objects.filter(vendor__name=command.VENDOR_NAME).count() == 1
