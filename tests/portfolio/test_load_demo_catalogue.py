"""`manage.py load_demo_catalogue`: after `load_demo`, the demo organization gets its own
questionnaire, hk-genai-provider v1, through the organization catalogue services (upload, draft,
publish; never `load_catalog`), an example provider's assessment scored with it, and the
assessment's PDF report in English and in Traditional Chinese (real PDFs, read back)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from accounts.models import Organization, User
from assessments.models import Assessment
from portfolio.management.commands import load_demo_catalogue as command
from probes.management.commands.load_demo import MEMBERS, ORGANIZATION
from questionnaires.selectors import questionnaire_visible
from questionnaires.validation import stored_values
from reports.models import ReportStatus
from reports.services import report_file
from scoring.engine import CompiledRuleset
from tests.reports.conftest import pdf_text


def run(name: str) -> str:
    out = io.StringIO()
    call_command(name, stdout=out)
    return out.getvalue()


def test_before_load_demo_it_says_what_to_run(db):
    with pytest.raises(CommandError, match="load_demo"):
        run("load_demo_catalogue")


def test_the_demo_publishes_it_scores_the_example_and_renders_both_pdfs(catalog, client):
    run("load_demo")
    output = run("load_demo_catalogue")

    demo = Organization.objects.get(name=ORGANIZATION)
    questionnaire = questionnaire_visible(organization=demo, slug=command.SLUG, version="1")
    assert questionnaire is not None and questionnaire.organization_id == demo.pk
    assert f"published {questionnaire.key}" in output
    other = Organization.objects.create(name="Another organization", slug="another")
    assert questionnaire_visible(organization=other, slug=command.SLUG, version="1") is None

    assessment = Assessment.objects.get(vendor__name=command.VENDOR_NAME)
    assert assessment.questionnaire_id == questionnaire.pk
    run_ = assessment.latest_run
    assert run_.ruleset.organization_id == demo.pk
    # The score the engine gives the stored answers with the published ruleset.
    answers = stored_values(
        questionnaire.spec, {a.question_code: a.value for a in assessment.answers.all()}
    )
    engine = CompiledRuleset(run_.ruleset.spec, questionnaire.spec)
    expected = engine.score(answers, as_of=run_.as_of)
    assert (assessment.risk_tier, assessment.risk_score) == (
        expected.risk_tier,
        expected.risk_score,
    )
    assert f"{assessment.risk_tier} ({assessment.risk_score}/100)" in output

    reports = {r.language: r for r in assessment.reports.all()}
    assert set(reports) == {"en", "zh-hant"}
    assert all(r.status == ReportStatus.READY for r in reports.values())
    english = " ".join(pdf_text(report_file(report=reports["en"])))
    chinese = " ".join(pdf_text(report_file(report=reports["zh-hant"]))).replace("\n", "")
    assert "GENAI-NO-AUDIT-RIGHTS-FOR-REGULATED-BUYER" in english
    # A reference the document adds (graded S) is printed with its title, "as summarised".
    cited = english.index("HK-SFC-24EC55-MRM — ")
    assert "AI model risk management" in english[cited : cited + 300]
    assert "(as summarised)" in english[cited : cited + 400]
    assert "受規管的採購方沒有審計權或資訊索取權" in chinese
    # Its own title on the cover (not the isolation assessment's), and its rules' rationale
    # called a rationale, not an incident fact.
    flat = " ".join(english.split())
    assert "Generative AI Provider: Hong Kong Regulatory Questionnaire" in flat
    assert "isolation assessment" not in flat and "Incident fact" not in flat
    assert "Rationale" in flat
    assert "生成式 AI 服務供應商：香港監管要求問卷" in chinese
    assert "租戶隔離評估" not in chinese and "事故事實" not in chinese and "理據" in chinese

    # The findings page cites them the same way.
    client.force_login(User.objects.get(email=MEMBERS[1][0]))
    page = client.get(reverse("assessments:findings", args=[assessment.pk]))
    finding = next(
        f.finding for f in page.context["findings"] if f.rule_id == "GENAI-AD-HOC-VALIDATION"
    )
    (mrm,) = [ref for ref in finding.references if ref.id == "HK-SFC-24EC55-MRM"]
    assert mrm.as_summarised and "AI model risk management" in mrm.title
    body = page.content.decode()
    assert "<h4>Rationale</h4>" in body and "incident fact" not in body

    assert "already present" in run("load_demo_catalogue")  # idempotent
    assert Assessment.objects.filter(vendor__name=command.VENDOR_NAME).count() == 1
