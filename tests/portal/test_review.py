"""Review and submit: missing answers listed, submission, and nothing of the scoring shown."""

import pytest

from assessments.models import AssessmentStatus, Channel, Finding
from assessments.services.answers import answers_save

from .conftest import portal_url, vendor_answers

pytestmark = pytest.mark.urls("tests.portal.urls")


def test_it_lists_missing_required_answers_with_links(client, token):
    page = client.get(portal_url(token, "review")).content.decode()
    for code in ("PRF-01", "CTX-01", "KV-01", "GOV-04"):
        assert f"{portal_url(token, 'section', code.split('-')[0])}#q-{code}" in page
    assert "USE-01" not in page
    assert "#q-PRF-08" not in page  # hidden until PRF-07 = yes: not missing
    assert "Not applicable: because PRF-07 = not answered" in page  # what the summary says
    assert "Submit answers" not in page


def test_it_refuses_an_incomplete_submission(client, token, assessment):
    response = client.post(portal_url(token, "review"), {"confirm": "yes"})
    assert response.status_code == 400
    assert "PRF-01: This question is required." in response.content.decode()
    assessment.refresh_from_db()
    assert assessment.status == AssessmentStatus.SENT


def test_it_submits_a_complete_assessment_and_never_shows_the_scoring(
    client, token, assessment, link, inline_scoring
):
    answers_save(
        assessment=assessment,
        answers=vendor_answers(),
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    page = client.get(portal_url(token, "review")).content.decode()
    assert "Every required question is answered." in page and "Submit answers" in page
    with inline_scoring():
        response = client.post(portal_url(token, "review"), {"confirm": "yes"})
    assert response.status_code == 302
    assert response["Location"] == portal_url(token, "thanks")
    assessment.refresh_from_db()
    assert assessment.status == AssessmentStatus.SCORED
    findings = list(
        Finding.objects.filter(run__assessment=assessment).values_list("rule_id", flat=True)
    )
    assert findings  # the launch configuration has findings, and the vendor sees none of them
    for url in (
        response["Location"],
        portal_url(token),
        portal_url(token, "review"),
        portal_url(token, "section", "CTX"),
    ):
        page = client.get(url).content.decode()
        assert client.get(url).status_code == 200
        for rule_id in findings:
            assert rule_id not in page
        assert "risk" not in page.lower().replace("risk assessment", "")
        assert "score" not in page.lower()
        assert "critical" not in page.lower()
    thanks = client.get(portal_url(token, "thanks")).content.decode()
    assert "Thank you" in thanks and "were submitted on" in thanks
    assert "Submit answers" not in client.get(portal_url(token, "review")).content.decode()


def test_the_thank_you_page_waits_for_a_submission(client, token):
    response = client.get(portal_url(token, "thanks"))
    assert response.status_code == 302
    assert response["Location"] == portal_url(token, "review")


def test_it_shows_every_answer_before_the_submit(client, token, assessment, link):
    answers_save(
        assessment=assessment,
        answers=vendor_answers(),
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    page = client.get(portal_url(token, "review")).content.decode()
    assert 'id="answers-CTX"' in page and 'id="answers-USE"' not in page  # never the buyer's
    assert "681,280" in page  # CTX-02 as the answers presenter shows it
    assert f'href="{portal_url(token, "section", "CTX")}"' in page  # a way to change them
    assert 'name="confirm"' in page


def test_it_submits_nothing_without_the_confirmation(client, token, assessment, link):
    answers_save(
        assessment=assessment,
        answers=vendor_answers(),
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    response = client.post(portal_url(token, "review"))
    assert response.status_code == 400
    assert "I have checked my answers" in response.content.decode()
    assert 'href="#confirm"' in response.content.decode()
    assessment.refresh_from_db()
    assert assessment.status == AssessmentStatus.SENT


def test_the_chinese_summary_says_why_a_question_is_not_applicable_in_chinese(client, token, link):
    """The condition's value is in the reader's words too: "不適用：因 PRF-07 = 未有作答", not
    "not answered" (nor an option's code) inside a Chinese sentence."""
    link.language = "zh-hant"
    link.save(update_fields=["language"])
    page = client.get(portal_url(token, "review")).content.decode()
    assert "not answered" not in page
    assert "不適用：因 PRF-07 = 未有作答" in page
