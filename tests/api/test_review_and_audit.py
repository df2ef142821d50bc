import pytest

from assessments.factories import critical_rule_ids
from assessments.models import Answer, Assessment, Review

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def url(assessment, action):
    return f"/api/v1/assessments/{assessment.pk}/{action}/"


def test_approving_despite_critical_findings_names_each_one(personas, scored, client_as):
    critical = critical_rule_ids(scored)
    assert critical
    response = client_as(personas.rex).post(
        url(scored, "review"), {"decision": "approved"}, format="json"
    )
    assert response.status_code == 400
    (message,) = response.json()["errors"]["acknowledged_findings"]
    assert all(rule_id in message for rule_id in critical)
    assert not Review.objects.exists()
    partial = {"decision": "approved", "acknowledged_findings": critical[1:]}
    assert (
        client_as(personas.rex).post(url(scored, "review"), partial, format="json").status_code
        == 400
    )


def test_a_reviewer_approves_a_scored_assessment(personas, scored, client_as):
    response = client_as(personas.rex).post(
        url(scored, "review"),
        {"decision": "approved", "acknowledged_findings": critical_rule_ids(scored)},
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    review = Review.objects.get()
    assert body["id"] == review.pk
    assert (body["decision"], body["assessment_status"], body["reviewer"]) == (
        "approved", "approved", "rex@acme.test",
    )  # fmt: skip
    assert body["run"] == scored.latest_run_id
    scored.refresh_from_db()
    assert scored.status == "approved"


def test_a_reviewer_requests_changes_and_reopens_questions(personas, scored, client_as):
    response = client_as(personas.rex).post(
        url(scored, "review"),
        {
            "decision": "changes_requested",
            "message": "Attach the startup logs and re-check CTX-02.",
            "reopen_codes": ["CTX-02", "CTX-04"],
        },
        format="json",
    )

    assert response.status_code == 201
    assert response.json()["reopen_codes"] == ["CTX-02", "CTX-04"]
    detail = client_as(personas.vic).get(f"/api/v1/assessments/{scored.pk}/").json()
    assert detail["status"] == "changes_requested"
    assert detail["reopened"] == ["CTX-02", "CTX-04"]


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"decision"}),
        ({"decision": "maybe"}, {"decision"}),
        ({"decision": "approved_with_conditions"}, {"conditions", "acknowledged_findings"}),
        ({"decision": "changes_requested"}, {"message", "reopen_codes"}),
        (
            {"decision": "changes_requested", "message": "m", "reopen_codes": ["USE-01"]},
            {"reopen_codes"},
        ),
        ({"decision": "approved", "reopen_codes": "CTX-01"}, {"reopen_codes"}),
        ({"decision": "approved", "reopen_codes": [["CTX-01"]]}, {"reopen_codes.0"}),
        ({"decision": "approved", "message": "m" * 4001}, {"message"}),
    ],
)
def test_a_bad_review_is_a_400_per_field_and_saves_nothing(
    personas, scored, client_as, body, fields
):
    response = client_as(personas.rex).post(url(scored, "review"), body, format="json")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == fields
    assert not Review.objects.exists()
    assert not Answer.objects.filter(reopened=True).exists()
    scored.refresh_from_db()
    assert scored.status == "scored"


def test_a_draft_cannot_be_reviewed(personas, assessment, client_as):
    response = client_as(personas.rex).post(
        url(assessment, "review"), {"decision": "approved"}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["status"]


def test_the_four_eyes_rule_holds_through_the_api(personas, answered, client_as, inline_scoring):
    # alice holds the review capability, but edited this assessment before it was submitted.
    alice = client_as(personas.alice)
    alice.patch(url(answered, "answers"), {"answers": {"PRF-09": "8 x H200"}}, format="json")
    with inline_scoring():
        client_as(personas.ava).post(url(answered, "submit"))

    acknowledged = critical_rule_ids(Assessment.objects.get(pk=answered.pk))
    response = alice.post(
        url(answered, "review"),
        {"decision": "approved", "acknowledged_findings": acknowledged},
        format="json",
    )

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["reviewer"]
    assert not Review.objects.exists()


@pytest.mark.parametrize("role", ["ava", "vic"])
def test_only_reviewers_and_owners_review(personas, scored, client_as, role):
    response = client_as(getattr(personas, role)).post(
        url(scored, "review"), {"decision": "approved"}, format="json"
    )
    assert response.status_code == 403
    assert not Review.objects.exists()


@pytest.mark.parametrize("role", ["alice", "ava", "rex", "vic"])
def test_every_member_reads_the_audit_trail(personas, scored, client_as, role):
    expected = 200
    response = client_as(getattr(personas, role)).get(url(scored, "audit"))

    assert response.status_code == expected
    body = response.json()
    actions = [event["action"] for event in body["results"]]
    assert actions[0] == "scoring.succeeded"  # newest first
    assert {"assessment.created", "answers.saved", "assessment.submitted"} <= set(actions)
    created = next(e for e in body["results"] if e["action"] == "assessment.created")
    assert (created["actor"], created["channel"]) == ("ava@acme.test", "web")
    assert all(e["assessment"] == scored.pk for e in body["results"])


def test_another_organization_may_not_read_the_audit_trail(personas, scored, client_as):
    assert client_as(personas.oscar).get(url(scored, "audit")).status_code == 404


def test_answers_saved_names_the_questions_it_changed(personas, scored, client_as):
    body = client_as(personas.vic).get(url(scored, "audit")).json()
    saved = [e for e in body["results"] if e["action"] == "answers.saved"]
    assert saved and all(e["detail"]["codes"] for e in saved)
