"""The same finding shows the same evidence, with the same labels, on the findings page and in
the PDF, in each language: both are drawn by `assessments.presenters.findings`."""

import pytest
from django.urls import reverse

from reports.context import report_context

from .conftest import pdf_text

pytestmark = pytest.mark.django_db

LANGUAGES = ["en", "zh-hant"]


def page_lines(client, assessment, language):
    client.cookies["django_language"] = language
    response = client.get(reverse("assessments:findings", args=[assessment.pk]))
    assert response.status_code == 200
    return {
        card.rule_id: [
            (line.kind, line.code, line.label, line.value, line.line_label)
            for line in card.finding.why
        ]
        for card in response.context["findings"]
    }


def report_lines(assessment, language):
    context = report_context(run=assessment.latest_run, language=language, number="X")
    return {
        finding.rule_id: [
            (line.kind, line.code, line.label, line.value, line.line_label) for line in finding.why
        ]
        for finding in context.findings
    }


def plain(text: str) -> str:
    """Without whitespace (lines break anywhere in a PDF) and colons (between label and value)."""
    return "".join(text.split()).replace(":", "").replace("：", "")


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_page_and_the_report_give_each_finding_the_same_evidence_lines(
    client, personas, scored, language
):
    client.force_login(personas.vic)
    on_page = page_lines(client, scored, language)
    in_report = report_lines(scored, language)

    assert on_page == in_report
    lines = [line for rule_lines in in_report.values() for line in rule_lines]
    assert {kind for kind, *_rest in lines} == {"answer", "derived", "log"}
    # Answers read as the member reads them, never as stored values.
    answers = {code: value for kind, code, _label, value, _line in lines if kind == "answer"}
    expected = {
        "en": ("Overwritten only, by the next request", "1,048,576 tokens"),
        "zh-hant": ("只由下一個請求覆寫", "1,048,576 詞元"),
    }[language]
    assert (answers["KV-01"], answers["CTX-01"]) == expected


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pdf_prints_those_lines_not_the_stored_values(scored, incident_reports, language):
    text = plain("".join(pdf_text(incident_reports[language].pdf)))
    lines = [line for rule_lines in report_lines(scored, language).values() for line in rule_lines]

    for kind, code, label, value, _line in lines:
        if kind != "log":  # a long log line wraps; its exact text is checked in test_pdf.py
            assert plain(f"{label}{value}") in text, (code, label, value)
    for stored in ("overwritten_only", "USE-01=regulated", "CTX-01=1048576"):
        assert stored not in text
