"""The assessor's workbook: every section the role may answer, the buyer's own included; the
vendor may upload it too, but not change the buyer's answers through it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from assessments import factories
from assessments.models import AuditEvent, Channel
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import member_of

from .conftest import fill, saved_answers, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(catalog, personas):
    """The incident vendor's answers, saved and not submitted; sent to the vendor."""
    ava = member_of(personas.ava)
    assessment = factories.incident_assessment(member=ava, submit=False)
    _link, token = vendor_link_issue(
        assessment=assessment, contact_email="sec@vendor.test", member=ava, channel=Channel.WEB
    )
    return assessment, token


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def member_workbook(client: Client, assessment) -> bytes:
    return client.get(reverse("spreadsheets:workbook_download", args=[assessment.pk, "en"])).content


def test_the_assessor_answers_the_buyers_section_in_the_workbook(draft, personas):
    assessment, _token = draft
    client = signed_in(personas.ava)
    page = client.get(reverse("spreadsheets:workbook", args=[assessment.pk]))
    assert page.status_code == 200
    content = fill(
        member_workbook(client, assessment), {"USE-03": "500,000"}, {"USE-03": "Longest contract."}
    )
    response = client.post(
        reverse("spreadsheets:workbook", args=[assessment.pk]),
        {"workbook": upload(content, "acme-answers.xlsx")},
    )
    assert response.status_code == 302
    assert saved_answers(assessment)["USE-03"] == 500000
    assert assessment.answers.get(question_code="USE-03").comment == "Longest contract."
    event = AuditEvent.objects.filter(assessment=assessment, action="answers.imported").get()
    assert event.detail == {"file": "acme-answers.xlsx", "codes": ["USE-03"]}
    assert event.actor_label == personas.ava.email


def test_roles_that_do_not_answer_cannot_upload(draft, personas):
    assessment, _token = draft
    content = member_workbook(signed_in(personas.ava), assessment)
    for user in (personas.rex, personas.vic):
        response = signed_in(user).post(
            reverse("spreadsheets:workbook", args=[assessment.pk]), {"workbook": upload(content)}
        )
        assert response.status_code == 403
    outsider = signed_in(personas.oscar).post(
        reverse("spreadsheets:workbook", args=[assessment.pk]), {"workbook": upload(content)}
    )
    assert outsider.status_code == 404


def test_the_vendor_cannot_change_the_buyers_answers_through_the_assessors_workbook(
    draft, personas, client
):
    assessment, token = draft
    content = member_workbook(signed_in(personas.ava), assessment)
    unchanged = client.post(
        reverse("portal_workbook:page", args=[token]), {"workbook": upload(content)}
    )
    assert unchanged.status_code == 302
    changed = client.post(
        reverse("portal_workbook:page", args=[token]),
        {"workbook": upload(fill(content, {"USE-03": 1, "CTX-01": 2000000}))},
    )
    assert changed.status_code == 400
    assert [(c.sheet, c.code, c.message) for c in changed.context["cells"]] == [
        ("USE", "USE-03", "This question cannot be changed now.")
    ]
    assert saved_answers(assessment)["CTX-01"] == 1048576  # nothing saved
