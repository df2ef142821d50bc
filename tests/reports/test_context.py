"""What a report prints, before any rendering: the context built from a run's snapshot."""

import pytest

from reports.context import report_context

from .conftest import LOG, LOGS, make_scored_assessment

pytestmark = pytest.mark.django_db


def answers_by_code(context):
    return {
        answer.code: answer for section in context.answer_sections for answer in section.answers
    }


def test_answers_are_printed_in_the_reports_language(scored):
    en = answers_by_code(report_context(run=scored.latest_run, language="en", number="X"))
    zh = answers_by_code(report_context(run=scored.latest_run, language="zh-hant", number="X"))

    assert (en["PRF-07"].value, zh["PRF-07"].value) == ("Yes", "是")
    assert en["PRF-03"].value == "Shared multi-tenant endpoint"
    assert zh["PRF-03"].value == "多租戶共享端點"
    assert en["PRF-04"].value.startswith("Hong Kong SAR, ")
    assert "、" in zh["PRF-04"].value
    assert (en["CTX-01"].value, zh["CTX-01"].value) == ("1,048,576 tokens", "1,048,576 詞元")
    assert en["CTX-08"].value == "sglang-prefill-glm53-launch.log"
    assert not en["ISO-05"].answered and en["ISO-05"].value == "Not answered"
    assert zh["ISO-05"].value == "未有作答"
    assert en["ISO-05"].comment.startswith("No independent penetration test")


def test_every_question_of_the_questionnaire_is_listed(scored):
    context = report_context(run=scored.latest_run, language="en", number="X")
    spec = scored.questionnaire.spec

    assert [s.code for s in context.answer_sections] == [s.code for s in spec.sections]
    assert set(answers_by_code(context)) == set(spec.questions)


def test_each_log_is_listed_with_its_exact_lines_or_as_not_parsed(catalog, personas, inline_tasks):
    notes = LOGS / "unrelated-runbook-notes.txt"
    assessment = make_scored_assessment(personas, logs=(LOG, notes))

    context = report_context(run=assessment.latest_run, language="en", number="X")

    (question,) = context.evidence
    assert question.code == "CTX-08"
    assert question.pool == "681,280 tokens" and question.context == "1,048,576 tokens"
    parsed, unparsed = question.files
    assert (parsed.name, parsed.parsed, parsed.engine) == (LOG.name, True, "SGLang")
    assert [line.number for line in parsed.lines] == [42]
    assert "max_total_num_tokens=681280" in parsed.lines[0].text
    assert parsed.pool_line == "line 42"
    assert (unparsed.name, unparsed.parsed, unparsed.lines) == (notes.name, False, ())
    assert unparsed.description.text.startswith("not parsed: ")
    assert not unparsed.description.verbatim  # the reason is stored as data: translated
    assert answers_by_code(context)["CTX-08"].value == f"{LOG.name}, {notes.name}"


def test_probe_and_model_evidence_is_printed_in_the_reports_language(catalog, personas):
    """A v2 run's findings read the probe result (PRB-02) and the model file (PRF-10): each line
    says which check or file it is and what it found, in the report's language, never a code or
    Python's None; PROBE-NOT-RUN of a v1 run reads PRB-01, which v1 never asks."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from assessments import factories
    from assessments.models import Channel
    from assessments.services.evidence import evidence_add
    from tests.personas import member_of

    member = member_of(personas.ava)
    assessment = factories.incident_assessment(
        member=member,
        answers_from="sizing-oversold-v2",
        evidence=(
            *factories.logs(factories.LAUNCH_LOG),
            ("PRF-10", LOGS.parent / "model_configs" / "llama-3-70b-architecture.config.json"),
        ),
        submit=False,
    )
    probe = factories.EXAMPLES_DIR / "probe-launch-day.json"
    evidence_add(
        assessment=assessment,
        question_code="PRB-02",
        upload=SimpleUploadedFile(probe.name, probe.read_bytes()),
        channel=Channel.SYSTEM,
    )
    assessment = factories.submit_and_score(assessment, actor=member.user, channel=Channel.WEB)
    v1 = make_scored_assessment(personas, vendor_name="Version One Co")

    en = report_context(run=assessment.latest_run, language="en", number="X")
    zh = report_context(run=assessment.latest_run, language="zh-hant", number="X")
    zh_v1 = report_context(run=v1.latest_run, language="zh-hant", number="X")

    def lines(context, kind=None):
        return [line for f in context.findings for line in f.why if kind in (None, line.kind)]

    probe_lines = {(line.code, line.label, line.value) for line in lines(en, "probe")}
    assert ("PRB-02", "Oversized prompts", "accepted") in probe_lines
    assert ("PRB-02", "Cross-tenant echo", "leak") in probe_lines
    assert ("PRB-02", "超長提示", "被接受") in {
        (line.code, line.label, line.value) for line in lines(zh, "probe")
    }
    (model,) = {(line.code, line.file, line.label, line.value) for line in lines(en, "model")}
    assert model == (
        "PRF-10",
        "llama-3-70b-architecture.config.json",
        "KV values per token",
        "163,840",
    )
    assert {line.label for line in lines(zh, "model")} == {"每個詞元的 KV 數值數目"}
    assert all(line.value != "None" for line in lines(zh) + lines(zh_v1))
    assert all(line.label for line in lines(zh) if line.kind != "answer")
    (never_asked,) = [line for line in lines(zh_v1) if line.code == "PRB-01"]
    assert never_asked.value == "未有作答"
