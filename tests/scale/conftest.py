"""Fixtures of the portfolio-scale tests: an incident assessment built through the real
services, to be copied in bulk by `bench/portfolio.py`."""

import datetime as dt

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import Channel
from assessments.services import (
    answers_save,
    assessment_create,
    assessment_submit,
    evidence_add,
    review_record,
    vendor_create,
    vendor_link_issue,
)
from tests.conftest import LOGS, QUESTIONNAIRE, launch_answer_file


@pytest.fixture
def scored_template(catalog, personas, inline_scoring):
    """The launch-day incident assessment: answered, the startup log uploaded, a vendor link,
    submitted and scored."""
    vendor = vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="Inferno AI"
    )
    assessment = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
        due_date=dt.date(2026, 9, 1),
    )
    answers = launch_answer_file()
    answers_save(
        assessment=assessment,
        answers=answers["answers"],
        comments=answers["comments"],
        actor=personas.ava,
        channel=Channel.WEB,
    )
    log = "sglang-prefill-glm53-launch.log"
    evidence_add(
        assessment=assessment,
        question_code="CTX-08",
        upload=SimpleUploadedFile(log, (LOGS / log).read_bytes(), content_type="text/plain"),
        actor=personas.ava,
        channel=Channel.WEB,
    )
    vendor_link_issue(
        assessment=assessment, contact_email="kv@inferno.test", actor=personas.ava,
        channel=Channel.WEB,
    )  # fmt: skip
    with inline_scoring():
        assessment_submit(assessment=assessment, actor=personas.ava, channel=Channel.WEB)
    assessment.refresh_from_db()
    assert assessment.status == "scored"
    return assessment


@pytest.fixture
def template(scored_template, personas):
    """The scored incident assessment, reviewed too: every kind of row an assessment has."""
    assessment = scored_template
    review_record(
        assessment=assessment,
        reviewer=personas.rex,
        decision="approved_with_conditions",
        conditions="Re-test after the next KV pool change.",
        channel=Channel.WEB,
    )
    assessment.refresh_from_db()
    assert assessment.status == "approved" and assessment.latest_run_id
    return assessment
