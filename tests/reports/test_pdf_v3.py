"""A v3 assessment's report in both languages (real WeasyPrint, through the report task): the
questions v3 adds (KV-10 to KV-12) with their answers, the findings of the v3 rules — the
over-claimed context the probe found, the cache salt taken from the request — and, in the
Chinese edition, their Chinese text."""

from __future__ import annotations

import pytest

from assessments import factories
from assessments.models import Channel
from reports.services import report_file, report_request
from tests.personas import member_of

from .conftest import pdf_text
from .test_pdf import squashed

pytestmark = pytest.mark.django_db

# language → text the edition must print (questions, answers, finding titles, the probe line).
PRINTED = {
    "en": (
        "How is the prefix cache kept to one tenant?",
        "A salt or cache key taken from the request",
        "Which KV offload or connector do you run, with versions?",
        "The endpoint serves less context than the vendor declared",
        "The prefix-cache salt comes from the request, so another tenant can copy it",
        "Salted offload keys are documented, not tested",
        "over-claimed",
    ),
    "zh-hant": (
        "前綴快取如何限於單一租戶使用？",
        "取自請求的鹽值或快取鍵",
        "貴公司運行哪個 KV 卸載方案或連接器？請註明版本。",
        "端點實際提供的上下文長度少於供應商申報",
        "前綴快取的鹽值取自請求，其他租戶可複製使用",
        "卸載記錄的鍵包含鹽值只屬文件所述，未經測試",
        "誇大申報",
    ),
}


@pytest.fixture
def overclaiming(catalog, personas, inline_tasks):
    """The over-claiming vendor of the demo: v3 answers and the stored probe result."""
    assessment = factories.incident_assessment(
        member=member_of(personas.ava),
        answers_from=factories.OVERCLAIMED_V3,
        evidence=[("PRB-02", factories.OVERCLAIMED_PROBE)],
    )
    assert assessment.latest_run.ruleset.key == "incident-2026-kv@3"
    return assessment


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_a_v3_report_prints_the_new_questions_and_findings(
    overclaiming, personas, inline_tasks, language
):
    with inline_tasks():
        report = report_request(
            assessment=overclaiming,
            language=language,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    report.refresh_from_db()
    assert report.status == "ready", report.error

    text = squashed("".join(pdf_text(report_file(report=report))))

    missing = [phrase for phrase in PRINTED[language] if squashed(phrase) not in text]
    assert missing == []
    for code in ("KV-10", "KV-11", "KV-12", "PROBE-CONTEXT-OVERCLAIMED", "CACHE-SALT-FROM-REQUEST"):
        assert code in text
    if language == "en":
        assert "前綴快取" not in text
