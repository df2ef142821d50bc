"""Drafts: what was typed and not saved yet is kept as typed, by the same rules as answers, and
never mistaken for a saved answer."""

import pytest
from django.core import mail
from django.urls import reverse

from assessments.models import AnswerDraft, Channel
from assessments.services.answers import answer_values, answers_save
from assessments.services.drafts import drafts_for, drafts_save
from assessments.services.vendor_links import vendor_link_issue
from core.errors import ConflictError, ForbiddenError, ServiceError
from tests.personas import member_of
from tests.web.conftest import make_draft, make_scored

pytestmark = pytest.mark.django_db


@pytest.fixture
def assessment(catalog, personas):
    return make_draft(personas)


@pytest.fixture
def link(assessment, personas):
    link, _token = vendor_link_issue(
        assessment=assessment,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    return link


def test_a_draft_keeps_what_was_typed_even_when_it_is_not_a_valid_answer(assessment, link):
    drafts = drafts_save(
        assessment=assessment,
        values={"CTX-01": "1M", "PRF-04": ["hk", "sg"]},
        comments={"CTX-01": "from the log"},
        vendor_link=link,
    )
    assert (drafts["CTX-01"].value, drafts["CTX-01"].comment) == ("1M", "from the log")
    assert drafts["PRF-04"].value == ["hk", "sg"]
    assert "CTX-01" not in answer_values(assessment)  # a draft is not an answer


def test_saving_the_answer_removes_its_draft(assessment, link):
    drafts_save(assessment=assessment, values={"CTX-01": "1M", "CTX-02": "5"}, vendor_link=link)
    answers_save(
        assessment=assessment,
        answers={"CTX-01": 1048576},
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    assert set(drafts_for(assessment=assessment)) == {"CTX-02"}


def test_a_value_that_reads_as_the_saved_answer_is_no_draft(assessment, link):
    answers_save(
        assessment=assessment,
        answers={"CTX-01": 1048576},
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    drafts_save(assessment=assessment, values={"CTX-01": "1M"}, vendor_link=link)
    drafts_save(assessment=assessment, values={"CTX-01": "1,048,576"}, vendor_link=link)
    assert not AnswerDraft.objects.exists()


def test_a_vendor_link_keeps_drafts_of_vendor_questions_only(assessment, link):
    with pytest.raises(ServiceError) as refused:
        drafts_save(
            assessment=assessment, values={"USE-01": "public", "NOPE-1": "x"}, vendor_link=link
        )
    assert set(refused.value.errors) == {"USE-01", "NOPE-1"}
    assert not AnswerDraft.objects.exists()


def test_a_member_keeps_drafts_of_the_questions_their_role_may_answer(assessment, personas):
    drafts_save(assessment=assessment, values={"USE-03": "lots"}, member=member_of(personas.ava))
    with pytest.raises(ForbiddenError):
        drafts_save(assessment=assessment, values={"USE-03": "few"}, member=member_of(personas.vic))
    assert drafts_for(assessment=assessment)["USE-03"].value == "lots"


def test_no_draft_once_the_answers_can_no_longer_change(catalog, personas):
    scored = make_scored(personas)
    with pytest.raises(ConflictError):
        drafts_save(assessment=scored, values={"CTX-01": "5"}, member=member_of(personas.ava))


def test_an_oversized_draft_is_refused_whole(assessment, link):
    with pytest.raises(ServiceError):
        drafts_save(
            assessment=assessment,
            values={"PRF-01": "x" * 5000, "CTX-01": "1"},
            vendor_link=link,
        )
    assert not AnswerDraft.objects.exists()


def test_a_link_to_another_section_keeps_the_drafts_without_javascript(client, link):
    token = vendor_link_issue(
        assessment=link.assessment,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(link.assessment.created_by),
        channel=Channel.WEB,
    )[1]
    response = client.post(
        reverse("portal:section", args=[token, "CTX"]),
        {"CTX-01": "1M", "go": "section:KV"},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("portal:section", args=[token, "KV"])
    assert drafts_for(assessment=link.assessment)["CTX-01"].value == "1M"


def test_the_invitation_promises_what_is_true(assessment, personas):
    mail.outbox.clear()
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        vendor_link_issue(
            assessment=assessment,
            contact_email="kv-team@cloud-inference.test",
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    body = mail.outbox[0].body
    assert "saved as you type" not in body
    assert "kept as a draft" in body and "only saved answers are submitted" in body
