import pytest

from assessments.models import Answer, Review

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def url(assessment, action):
    return f"/api/v1/assessments/{assessment.pk}/{action}/"


def test_a_reviewer_approves_a_scored_assessment(personas, scored, client_as):
    response = client_as(personas.rex).post(
        url(scored, "review"), {"decision": "approved"}, format="json"
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
        ({"decision": "approved_with_conditions"}, {"conditions"}),
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

    response = alice.post(url(answered, "review"), {"decision": "approved"}, format="json")

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


@pytest.mark.parametrize(("role", "expected"), [("alice", 200), ("rex", 200)])
def test_owners_and_reviewers_read_the_audit_trail(personas, scored, client_as, role, expected):
    response = client_as(getattr(personas, role)).get(url(scored, "audit"))

    assert response.status_code == expected
    body = response.json()
    actions = [event["action"] for event in body["results"]]
    assert actions[0] == "scoring.succeeded"  # newest first
    assert {"assessment.created", "answers.saved", "assessment.submitted"} <= set(actions)
    created = next(e for e in body["results"] if e["action"] == "assessment.created")
    assert (created["actor"], created["channel"]) == ("ava@acme.test", "web")
    assert all(e["assessment"] == scored.pk for e in body["results"])


@pytest.mark.parametrize(("role", "expected"), [("ava", 403), ("vic", 403), ("oscar", 404)])
def test_others_may_not_read_the_audit_trail(personas, scored, client_as, role, expected):
    assert client_as(getattr(personas, role)).get(url(scored, "audit")).status_code == expected
