"""Reviewer sign-off: approve, approve with conditions, reject or request changes; the four-eyes
rule, and why the button is unavailable."""

import pytest
from django.urls import reverse

from assessments.models import Answer, AnswerRevision, AuditEvent, Channel, Review

REVIEW = "assessments:review"


def review(client, assessment, **data):
    return client.post(reverse(REVIEW, args=[assessment.pk]), data)


def test_a_reviewer_who_took_no_part_approves(client, personas, scored):
    client.force_login(personas.rex)
    page = client.get(reverse(REVIEW, args=[scored.pk]))
    assert page.context["blockers"] == []
    response = review(
        client, scored, decision="approved", acknowledged_findings=critical_rules(scored)
    )
    assert response.status_code == 302
    scored.refresh_from_db()
    assert scored.status == "approved"
    decision = Review.objects.get()
    assert (decision.reviewer, decision.run) == (personas.rex, scored.latest_run)
    assert AuditEvent.objects.filter(action="review.approved", actor=personas.rex).exists()
    page = client.get(reverse(REVIEW, args=[scored.pk])).content.decode()
    assert "Approved" in page and "rex@acme.test" in page


def test_an_assessor_cannot_sign_off_and_is_told_why(client, personas, scored):
    client.force_login(personas.ava)
    page = client.get(reverse(REVIEW, args=[scored.pk]))
    body = page.content.decode()
    assert "Only reviewers and owners can sign off; your role is Assessor." in body
    assert "Record decision" not in body
    assert review(client, scored, decision="approved").status_code == 403
    assert not Review.objects.exists()


def test_an_owner_who_edited_the_answers_is_stopped_by_the_four_eyes_rule(
    client, personas, draft, settings
):
    from .conftest import make_scored

    assessment = make_scored(personas, draft.vendor)
    # alice changed an answer of this assessment: she may not also decide on it

    AnswerRevision.objects.create(
        assessment=assessment,
        question_code="USE-02",
        value="finance",
        changed_by=personas.alice,
        channel=Channel.WEB,
    )
    client.force_login(personas.alice)
    page = client.get(reverse(REVIEW, args=[assessment.pk]))
    assert any("four-eyes" in reason for reason in page.context["blockers"])
    assert 'disabled aria-describedby="review-blockers"' in page.content.decode()
    response = review(client, assessment, decision="approved")
    assert response.status_code == 400
    assert "four-eyes" in response.content.decode()
    assessment.refresh_from_db()
    assert assessment.status == "scored" and not assessment.reviews.exists()


def test_approval_with_conditions_needs_the_conditions(client, personas, scored):
    client.force_login(personas.rex)
    response = review(client, scored, decision="approved_with_conditions", conditions="  ")
    assert response.status_code == 400
    assert "conditions" in response.context["form"].errors
    assert 'href="#id_conditions"' in response.content.decode()
    assert not Review.objects.exists()
    response = review(
        client,
        scored,
        decision="approved_with_conditions",
        conditions="Cap prompts at 200,000 tokens at our gateway.",
        acknowledged_findings=critical_rules(scored),
    )
    assert response.status_code == 302
    assert Review.objects.get().conditions == "Cap prompts at 200,000 tokens at our gateway."
    scored.refresh_from_db()
    assert scored.status == "approved"


def test_a_rejection(client, personas, scored):
    client.force_login(personas.alice)  # an owner who took no part may decide too
    assert review(client, scored, decision="rejected").status_code == 302
    scored.refresh_from_db()
    assert scored.status == "rejected"


def test_requesting_changes_reopens_the_chosen_vendor_questions_with_a_message(
    client, personas, scored
):
    client.force_login(personas.rex)
    response = review(
        client,
        scored,
        decision="changes_requested",
        message="Please upload the decode node's startup log.",
        reopen_codes=["CTX-03", "CTX-08"],
    )
    assert response.status_code == 302
    scored.refresh_from_db()
    assert scored.status == "changes_requested"
    reopened = set(
        Answer.objects.filter(assessment=scored, reopened=True).values_list(
            "question_code", flat=True
        )
    )
    assert reopened == {"CTX-03", "CTX-08"}
    page = client.get(reverse("assessments:detail", args=[scored.pk])).content.decode()
    assert "re-opened" in page


@pytest.mark.parametrize(
    ("data", "fields"),
    [
        ({"decision": "changes_requested"}, {"message", "reopen_codes"}),
        (
            {"decision": "changes_requested", "message": "x", "reopen_codes": ["USE-01"]},
            {"reopen_codes"},
        ),
        (
            {"decision": "changes_requested", "message": "x", "reopen_codes": ["NOPE-1"]},
            {"reopen_codes"},
        ),
        ({"decision": "maybe"}, {"decision"}),
        ({}, {"decision"}),
    ],
)
def test_an_incomplete_decision_is_reported_beside_its_fields(
    client, personas, scored, data, fields
):
    client.force_login(personas.rex)
    response = review(client, scored, **data)
    assert response.status_code == 400
    assert fields <= set(response.context["form"].errors)
    scored.refresh_from_db()
    assert scored.status == "scored" and not Review.objects.exists()


def test_the_buyers_questions_are_not_offered_for_reopening(client, personas, scored):
    client.force_login(personas.rex)
    form = client.get(reverse(REVIEW, args=[scored.pk])).context["form"]
    codes = {code for _group, options in form.fields["reopen_codes"].choices for code, _ in options}
    assert "CTX-08" in codes and not any(code.startswith("USE-") for code in codes)


def test_an_assessment_that_is_not_scored_cannot_be_signed_off(client, personas, draft):
    client.force_login(personas.rex)
    page = client.get(reverse(REVIEW, args=[draft.pk]))
    assert any("once the assessment is scored" in reason for reason in page.context["blockers"])
    response = review(client, draft, decision="approved")
    assert response.status_code == 400
    assert not Review.objects.exists()


def test_a_second_decision_is_refused_once_signed_off(client, personas, scored):
    client.force_login(personas.rex)
    review(client, scored, decision="approved", acknowledged_findings=critical_rules(scored))
    response = review(client, scored, decision="rejected")
    assert response.status_code == 400
    assert Review.objects.count() == 1


def test_the_viewer_reads_the_sign_off_history_without_a_form_to_use(client, personas, scored):
    client.force_login(personas.rex)
    review(client, scored, decision="approved", acknowledged_findings=critical_rules(scored))
    client.force_login(personas.vic)
    page = client.get(reverse(REVIEW, args=[scored.pk]))
    body = page.content.decode()
    assert page.status_code == 200
    assert "Signed off: Approved" in body
    assert "Record decision" not in body
    assert "rex@acme.test" in body


def critical_rules(assessment):
    return sorted(
        assessment.latest_run.findings.filter(severity="critical").values_list("rule_id", flat=True)
    )


def test_after_approving_with_conditions_the_page_shows_the_decision_not_a_refusal(
    client, personas, scored
):
    client.force_login(personas.rex)
    response = review(
        client,
        scored,
        decision="approved_with_conditions",
        conditions="Cap prompts at 200,000 tokens.",
        acknowledged_findings=critical_rules(scored),
    )
    assert response.status_code == 302
    page = client.get(response["Location"], follow=True)
    html = page.content.decode()
    assert "You cannot sign off" not in html and "review-blockers" not in html
    assert "Signed off: Approved with conditions" in html
    assert "Cap prompts at 200,000 tokens." in html
    assert "Record decision" not in html  # nothing left to decide
    overview = client.get(reverse("assessments:detail", args=[scored.pk]))
    assert "Approved with conditions" in overview.context["next_step"]
    assert "Cap prompts at 200,000 tokens." in overview.context["next_step"]


def test_approving_despite_a_critical_finding_needs_a_confirmation_naming_it(
    client, personas, scored
):
    critical = critical_rules(scored)
    assert critical  # the launch configuration leaks across tenants
    client.force_login(personas.rex)
    page = client.get(reverse(REVIEW, args=[scored.pk])).content.decode()
    for rule_id in critical:
        assert f'name="acknowledged_findings" value="{rule_id}"' in page
    response = review(client, scored, decision="approved")
    assert response.status_code == 400
    errors = response.context["form"].errors["acknowledged_findings"]
    assert all(rule_id in " ".join(errors) for rule_id in critical)
    scored.refresh_from_db()
    assert scored.status == "scored" and not Review.objects.exists()
    # Rejecting needs no confirmation; approving with every one confirmed is recorded.
    assert (
        review(client, scored, decision="approved", acknowledged_findings=critical).status_code
        == 302
    )
    assert Review.objects.get().decision == "approved"
    event = AuditEvent.objects.get(action="review.approved")
    assert event.detail["acknowledged_findings"] == critical
