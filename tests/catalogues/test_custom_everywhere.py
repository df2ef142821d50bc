"""An organization's English-only questionnaire through the vendor portal, its workbook and the
report: said to be English only in Chinese, never half translated."""

import pytest
from django.test import Client
from django.urls import reverse

from assessments.models import Channel
from assessments.services.answers import answers_save, assessment_create
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_issue
from assessments.services.vendors import vendor_create
from reports.context import report_context
from scoring.services import catalogue_publish
from tests.catalogues.conftest import example_bytes, upload
from tests.personas import member_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def english_only(catalog, personas, inline_scoring):
    """An assessment of Acme with its English-only questionnaire, scored; and a vendor link."""
    draft = upload(personas, example_bytes(**{", zh-hant: 管治}": "}"}))
    catalogue_publish(context=member_of(personas.alice, personas.acme), ruleset=draft.ruleset)
    vendor = vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="Client AI"
    )
    assessment = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="vendor-dd@1",
        actor=personas.alice,
        channel=Channel.WEB,
    )
    _link, token = vendor_link_issue(
        assessment=assessment,
        contact_email="sec@client.test",
        member=member_of(personas.alice, personas.acme),
        channel=Channel.WEB,
    )
    answers_save(
        assessment=assessment,
        answers={"GOV-01": "no", "GOV-02": "hk"},
        actor=personas.alice,
        channel=Channel.WEB,
    )
    with inline_scoring():
        assessment_submit(assessment=assessment, actor=personas.alice, channel=Channel.WEB)
    assessment.refresh_from_db()
    return assessment, token


def test_the_portal_says_english_only_in_chinese(english_only):
    _assessment, token = english_only
    client = Client()
    client.post(reverse("portal:language", args=[token]), {"language": "zh-hant"})
    page = client.get(reverse("portal:landing", args=[token])).content.decode()
    assert "english-only" in page and "Vendor due diligence" in page
    client.post(reverse("portal:language", args=[token]), {"language": "en"})
    english = client.get(reverse("portal:landing", args=[token])).content.decode()
    assert "english-only" not in english


def test_the_chinese_report_says_english_only(english_only):
    assessment, _token = english_only
    context = report_context(run=assessment.latest_run, language="zh-hant", number="T-1")
    assert context.english_only and context.questionnaire_title == "Vendor due diligence"
    assert [f.rule_id for f in context.findings] == ["DD-NO-REGISTER"]
