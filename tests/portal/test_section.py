"""The section page: visible questions only, all-or-nothing saves, errors kept in place."""

import re

import pytest

from assessments.models import Answer, AnswerRevision, Channel
from assessments.services.answers import answer_values, answers_save
from assessments.services.submission import assessment_submit

from .conftest import portal_url, vendor_answers

pytestmark = pytest.mark.urls("tests.portal.urls")


def test_it_shows_every_visible_question_with_the_right_input(client, token):
    page = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert 'name="CTX-01"' in page and 'inputmode="numeric"' in page
    assert "tokens" in page  # the unit
    assert 'name="CTX-04"' in page and 'type="radio"' in page
    assert "<fieldset" in page and "<legend>" in page
    assert 'name="comment-CTX-01"' in page and 'for="q-comment-CTX-01"' in page
    assert 'name="CTX-03"' not in page  # shown only when PRF-07 = yes
    assert 'type="file"' in page  # CTX-08, the startup log


def test_yes_no_questions_offer_yes_no_unknown(client, token):
    page = client.get(portal_url(token, "section", "KV")).content.decode()
    for code in ("yes", "no", "unknown"):
        assert f'id="q-KV-02-{code}"' in page
    assert "Unknown</label>" in page


def test_a_bad_integer_saves_nothing_from_that_post(client, token, assessment):
    response = client.post(
        portal_url(token, "section", "CTX"),
        {
            "CTX-01": "1M",
            "CTX-02": "681,280",
            "CTX-04": "manual_at_launch",
            "comment-CTX-02": "from the log",
        },
    )
    assert response.status_code == 400
    assert not Answer.objects.filter(
        assessment=assessment, question_code__startswith="CTX"
    ).exists()
    page = response.content.decode()
    summary = page.split('role="alert"', 1)[1].split("</div>", 1)[0]
    assert 'href="#q-CTX-01"' in summary
    assert "CTX-01: Enter a whole number of tokens" in summary
    # What was typed stays, and the error is tied to its input.
    assert 'value="1M"' in page and 'value="681,280"' in page
    assert re.search(r'id="q-CTX-01_error"', page)
    (ctx01,) = re.findall(r'<input[^>]*name="CTX-01"[^>]*>', page)
    assert re.search(r'aria-describedby="[^"]*q-CTX-01_error"', ctx01)
    assert 'aria-invalid="true"' in ctx01
    assert re.search(r'id="q-CTX-04-manual_at_launch"[^>]*checked', page)
    assert "from the log</textarea>" in page


def test_it_saves_a_section_and_redirects_with_a_message(client, token, assessment):
    response = client.post(
        portal_url(token, "section", "CTX"),
        {
            "CTX-01": "1,048,576",
            "CTX-02": "681280",
            "CTX-04": "not_verified",
            "comment-CTX-02": "prefill log",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == portal_url(token, "section", "CTX")
    values = answer_values(assessment)
    assert values["CTX-01"] == 1_048_576 and values["CTX-02"] == 681_280
    assert (
        Answer.objects.get(assessment=assessment, question_code="CTX-02").comment == "prefill log"
    )
    page = client.get(response["Location"]).content.decode()
    assert "Saved." in page
    assert 'value="1,048,576"' in page
    revision = AnswerRevision.objects.filter(assessment=assessment, question_code="CTX-01").get()
    assert revision.channel == Channel.VENDOR_LINK and revision.vendor_link_id is not None


def test_untouched_blank_questions_are_not_recorded(client, token, assessment):
    client.post(portal_url(token, "section", "CTX"), {"CTX-01": "1048576", "comment-CTX-02": ""})
    assert list(
        Answer.objects.filter(assessment=assessment, question_code__startswith="CTX").values_list(
            "question_code", flat=True
        )
    ) == ["CTX-01"]


def test_choosing_prf07_yes_makes_prf08_appear(client, token, assessment):
    url = portal_url(token, "section", "PRF")
    assert 'name="PRF-08"' not in client.get(url).content.decode()
    client.post(url, {"PRF-07": "yes"})
    assert 'name="PRF-08"' in client.get(url).content.decode()
    client.post(url, {"PRF-07": "yes", "PRF-08": "mooncake"})
    client.post(url, {"PRF-07": "no", "PRF-08": "mooncake"})
    assert 'name="PRF-08"' not in client.get(url).content.decode()
    # The hidden answer is kept (and ignored by scoring); answering "yes" again brings it back.
    assert answer_values(assessment)["PRF-08"] == "mooncake"


def test_autosave_keeps_drafts_and_shows_conditional_questions_without_saving(
    client, token, assessment
):
    response = client.post(
        portal_url(token, "autosave", "PRF"),
        {"PRF-07": "yes", "PRF-01": "typed, not saved"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    body = response.content.decode()
    # PRF-08 appears: its markup, for the page to insert; nothing else is drawn again
    assert '<template data-question="PRF-08">' in body and 'name="PRF-08"' in body
    assert body.count("<template") == 1
    assert 'id="q-PRF-01-draft" hx-swap-oob="true"' in body
    assert not Answer.objects.filter(
        assessment=assessment, question_code__startswith="PRF"
    ).exists()
    page = client.get(portal_url(token, "section", "PRF")).content.decode()
    assert 'name="PRF-08"' in page
    assert "typed, not saved</textarea>" in page
    assert "Draft, not saved yet" in page


def test_the_section_form_autosaves_and_never_redraws_its_questions(client, token):
    page = client.get(portal_url(token, "section", "PRF")).content.decode()
    form = page.split('id="section-form"', 1)[1].split(">", 1)[0]
    assert f'hx-post="{portal_url(token, "autosave", "PRF")}"' in form
    assert "data-unsaved-warning" in form
    questions = page.split('id="questions"', 1)[1].split(">", 1)[0]
    assert "hx-get" not in questions  # a redraw would replace the field being typed in
    assert 'data-question="PRF-07"' in page and "static/questions.js" in page


def test_the_autosave_answers_for_the_questions_the_page_shows(client, token):
    """The page says which questions it shows as not asked: the answer turns exactly those
    that differ now, whatever an earlier answer said."""
    url = portal_url(token, "autosave", "KV")
    client.post(url, {"KV-04": "yes"}, HTTP_HX_REQUEST="true")  # KV-05 asked (kept as a draft)
    # A page that still shows KV-05 as not asked (and KV-07, -08, -09, not asked given the
    # other answers) gets KV-05 drawn, and no other.
    stale = client.post(
        url,
        {"KV-04": "yes", "questions_not_asked": "KV-05,KV-07,KV-08,KV-09"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert '<template data-question="KV-05">' in stale and 'name="KV-05"' in stale
    assert 'data-question="KV-07">' not in stale
    # A page that already shows KV-05 gets nothing drawn.
    current = client.post(
        url, {"KV-04": "yes", "questions_not_asked": "KV-07,KV-08,KV-09"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<template" not in current
    # "no": KV-05 turns into the reason it is not asked.
    hidden = client.post(
        url, {"KV-04": "no", "questions_not_asked": "KV-07,KV-08,KV-09"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    template = hidden.split('<template data-question="KV-05">', 1)[1].split("</template>", 1)[0]
    assert "question-not-applicable" in template and "<input" not in template


def test_vendor_text_is_escaped(client, token):
    url = portal_url(token, "section", "PRF")
    client.post(url, {"PRF-01": "<script>alert(1)</script>"})
    page = client.get(url).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_it_refuses_codes_of_other_sections_and_the_buyers(client, token, assessment):
    client.post(
        portal_url(token, "section", "PRF"),
        {"PRF-01": "Service", "USE-01": "public", "CTX-01": "5"},
    )
    values = answer_values(assessment)
    assert values["USE-01"] == "confidential"
    assert "CTX-01" not in values


def test_a_submitted_assessment_is_read_only(client, token, assessment, link, inline_scoring):
    answers_save(
        assessment=assessment,
        answers=vendor_answers(),
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    with inline_scoring():
        assessment_submit(assessment=assessment, vendor_link=link, channel=Channel.VENDOR_LINK)
    url = portal_url(token, "section", "CTX")
    page = client.get(url).content.decode()
    assert 'name="save"' not in page  # nothing to save: the form only navigates
    assert 'name="CTX-01"' not in page
    assert "1,048,576" in page  # shown as text
    response = client.post(url, {"CTX-01": "5"})
    assert response.status_code == 409
    assert answer_values(assessment)["CTX-01"] == 1_048_576


def test_after_request_changes_only_reopened_questions_are_editable(
    client, token, assessment, submitted_then_reopened
):
    submitted_then_reopened(
        reopen=["CTX-02"],
        message="Please give the decode pool from the log.",
    )
    landing = client.get(portal_url(token)).content.decode()
    assert "Please give the decode pool from the log." in landing
    assert f"{portal_url(token, 'section', 'CTX')}#q-CTX-02" in landing
    url = portal_url(token, "section", "CTX")
    page = client.get(url).content.decode()
    assert 'name="CTX-02"' in page
    assert 'name="CTX-01"' not in page  # read-only
    assert client.post(url, {"CTX-02": "2,040,000", "CTX-01": "5"}).status_code == 302
    values = answer_values(assessment)
    assert values["CTX-02"] == 2_040_000
    assert values["CTX-01"] == 1_048_576


def test_htmx_is_served_locally(client, token):
    page = client.get(portal_url(token, "section", "PRF")).content.decode()
    assert "/static/django_htmx/htmx-2.min.js" in page
    assert not re.search(r'<script[^>]+src="(https?:)?//', page)


def test_help_text_shows_code_spans_escaped(client, token):
    page = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert '<code translate="no">max_total_num_tokens=</code>' in page
    assert "`max_total_num_tokens=`" not in page


def test_without_javascript_a_save_that_opens_required_follow_ups_names_and_links_them(
    client, token, assessment
):
    url = portal_url(token, "section", "PRF")
    response = client.post(url, {"PRF-07": "yes"}, follow=True)
    page = response.content.decode()
    assert "Saved. Your answers opened a new required question in this section:" in page
    assert '<a href="#question-PRF-08">PRF-08</a>' in page
    assert 'id="question-PRF-08"' in page  # the link's target is on the page
    # Saving again with nothing new revealed is a plain "Saved."
    again = client.post(url, {"PRF-07": "yes", "PRF-08": "mooncake"}, follow=True)
    assert "opened a new required question" not in again.content.decode()
    assert "Saved." in again.content.decode()


def test_a_reopened_answer_that_opens_follow_ups_lets_the_vendor_answer_them(
    client, token, assessment, link, inline_scoring, submitted_then_reopened
):
    """Not disaggregated at first; the reviewer re-opens PRF-07, the vendor now says yes: the
    questions that answer opens (PRF-08, the KV transfer backend, …) are the vendor's to answer,
    or the assessment could never be submitted again."""
    spec = assessment.questionnaire.spec
    follow_ups = {q.code for q in spec.iter_questions() if q.show_if and "PRF_07" in q.show_if}
    assert "PRF-08" in follow_ups
    first = {k: v for k, v in vendor_answers().items() if k not in follow_ups} | {"PRF-07": "no"}
    submitted_then_reopened(
        reopen=["PRF-07"],
        message="Your status page says prefill and decode run apart.",
        answers=first,
    )
    url = portal_url(token, "section", "PRF")
    assert client.post(url, {"PRF-07": "yes"}).status_code == 302
    page = client.get(url).content.decode()
    assert 'name="PRF-08"' in page
    # The follow-ups are in other sections too (CTX-03, KV-08, …): each answered on its page.
    for section in sorted({code.split("-")[0] for code in follow_ups}):
        answers = {c: v for c, v in vendor_answers().items() if c in follow_ups and section in c}
        if section == "PRF":
            answers["PRF-07"] = "yes"
        response = client.post(portal_url(token, "section", section), answers)
        assert response.status_code == 302, response.content.decode()[-2000:]
    values = answer_values(assessment)
    assert {code: values[code] for code in follow_ups} == {
        code: vendor_answers()[code] for code in follow_ups
    }
    with inline_scoring():
        assessment_submit(assessment=assessment, vendor_link=link, channel=Channel.VENDOR_LINK)


def test_reopening_a_question_leaves_its_answered_follow_ups_as_they_were(
    client, token, submitted_then_reopened
):
    """PRF-07 was "yes" and PRF-08 answered when the reviewer re-opened PRF-07 alone: PRF-08 is
    not the vendor's to change in this round."""
    submitted_then_reopened(
        reopen=["PRF-07"],
        message="Confirm prefill and decode run apart.",
    )
    page = client.get(portal_url(token, "section", "PRF")).content.decode()
    assert 'name="PRF-07"' in page
    assert 'name="PRF-08"' not in page
