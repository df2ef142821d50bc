"""The clarification threads in the report's appendix, when asked for: the real PDF (request →
eager task → WeasyPrint → stored file), read back with pypdf, in both languages."""

from __future__ import annotations

import pytest
from django.urls import reverse

from assessments import factories
from assessments.models import Channel, VendorLink
from assessments.services.threads import thread_ask, thread_reply_vendor, thread_resolve
from reports.labels import LABELS
from reports.models import Report
from reports.services import report_request
from reports.storage import report_storage
from tests.personas import member_of

from .conftest import pdf_text

QUESTION = "Your startup log shows a memory fraction of 0.7: which is right?"
ANSWER = "The log is from staging; production runs 0.85."


@pytest.fixture
def discussed(catalog, personas, inline_tasks):
    """A scored assessment answered through a link, with one resolved thread about KV-01."""
    member = member_of(personas.ava)
    assessment = factories.incident_assessment(member=member, through_link=True)
    link = VendorLink.objects.get(assessment=assessment)
    message = thread_ask(
        assessment=assessment,
        member=member,
        question_code="KV-01",
        body=QUESTION,
        channel=Channel.WEB,
    )
    thread_reply_vendor(vendor_link=link, question_code="KV-01", body=ANSWER)
    thread_resolve(thread=message.thread, member=member, channel=Channel.WEB)
    return assessment


def rendered(assessment, personas, inline_tasks, *, language: str, include_threads: bool) -> str:
    with inline_tasks():
        report = report_request(
            assessment=assessment,
            language=language,
            member=member_of(personas.ava),
            channel=Channel.WEB,
            include_threads=include_threads,
        )
    report.refresh_from_db()
    assert report.status == "ready", report.error
    with report_storage().open(report.storage_name, "rb") as stored:
        return "".join("\n".join(pdf_text(stored.read())).split())


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_the_appendix_prints_the_threads_when_asked(discussed, personas, inline_tasks, language):
    text = rendered(discussed, personas, inline_tasks, language=language, include_threads=True)
    labels = LABELS[language]
    assert "".join(labels["threads_appendix"].split()) in text
    assert "".join(QUESTION.split()) in text
    assert "".join(ANSWER.split()) in text
    assert "ava@acme.test" in text
    assert "".join(labels["thread_vendor"].format(email=factories.VENDOR_CONTACT).split()) in text
    assert "".join(labels["thread_resolved"].split()) in text


def test_the_appendix_is_left_out_unless_asked(discussed, personas, inline_tasks):
    text = rendered(discussed, personas, inline_tasks, language="en", include_threads=False)
    assert "".join(LABELS["en"]["threads_appendix"].split()) not in text
    assert "".join(ANSWER.split()) not in text


def test_the_request_form_has_the_box(client, discussed, personas, inline_tasks):
    client.force_login(personas.ava)
    url = reverse("reports:assessment_reports", args=[discussed.pk])
    assert 'name="include_threads"' in client.get(url).content.decode()
    with inline_tasks():
        client.post(url, {"language": "en", "include_threads": "on"})
    assert Report.objects.get(assessment=discussed).include_threads
