import pytest

from accounts.roles import ROLE_CAPABILITIES, Capability, Role
from assessments.models import Answer, AnswerRevision, Assessment

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def url(assessment):
    return f"/api/v1/assessments/{assessment.pk}/answers/"


def stored(assessment):
    return {
        a.question_code: (a.value, a.comment) for a in Answer.objects.filter(assessment=assessment)
    }


def test_answers_and_comments_are_saved(personas, assessment, client_as):
    response = client_as(personas.ava).patch(
        url(assessment),
        {
            "answers": {"PRF-05": "sglang", "CTX-01": "1,048,576", "GOV-01": ["iso27001"]},
            "comments": {"CTX-01": "from the launch log"},
        },
        format="json",
    )

    assert response.status_code == 200
    assert response.json() == {
        "answers": {"PRF-05": "sglang", "CTX-01": 1048576, "GOV-01": ["iso27001"]},
        "comments": {"CTX-01": "from the launch log"},
        "changed": ["CTX-01", "GOV-01", "PRF-05"],
    }
    assert stored(assessment)["CTX-01"] == (1048576, "from the launch log")
    revision = AnswerRevision.objects.get(question_code="CTX-01")
    assert (revision.changed_by, revision.channel) == (personas.ava, "api")


def test_the_response_shows_every_answer_not_only_the_changed_ones(personas, answered, client_as):
    response = client_as(personas.ava).patch(
        url(answered), {"answers": {"PRF-01": "Workers AI Pro"}}, format="json"
    )

    body = response.json()
    assert body["changed"] == ["PRF-01"]
    assert body["answers"]["PRF-01"] == "Workers AI Pro"
    assert body["answers"]["CTX-01"] == 1048576


def test_null_clears_an_answer(personas, answered, client_as):
    response = client_as(personas.ava).patch(
        url(answered), {"answers": {"PRF-09": None, "PRF-01": None}}, format="json"
    )

    assert response.status_code == 200
    assert "PRF-01" not in response.json()["answers"]
    assert stored(answered)["PRF-01"][0] is None


def test_one_bad_code_among_good_ones_saves_nothing(personas, answered, client_as):
    before = stored(answered)
    revisions = AnswerRevision.objects.count()

    response = client_as(personas.ava).patch(
        url(answered),
        {
            "answers": {
                "PRF-01": "A new name",
                "CTX-01": "1M",
                "CTX-02": 2_000_000,
                "GOV-01": ["none", "iso27001"],
                "XYZ-99": "yes",
            },
            "comments": {"CTX-02": "new comment"},
        },
        format="json",
    )

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"CTX-01", "GOV-01", "XYZ-99"}
    assert all(isinstance(m, str) for messages in errors.values() for m in messages)
    assert "1M" in errors["CTX-01"][0] or "whole number" in errors["CTX-01"][0]
    assert stored(answered) == before
    assert AnswerRevision.objects.count() == revisions


@pytest.mark.parametrize(
    ("answers", "code"),
    [
        ({"CTX-01": 1.5}, "CTX-01"),
        ({"CTX-01": -1}, "CTX-01"),
        ({"CTX-01": "1e6"}, "CTX-01"),
        ({"CTX-01": True}, "CTX-01"),
        ({"PRF-07": "maybe"}, "PRF-07"),
        ({"PRF-04": "hk"}, "PRF-04"),
        ({"PRF-04": ["hk", "hk"]}, "PRF-04"),
        ({"PRF-06": "not a version"}, "PRF-06"),
        ({"ISO-05": "2026-02-30"}, "ISO-05"),
        ({"PRF-01": "x" * 4001}, "PRF-01"),
        ({"PRF-01": {"nested": "object"}}, "PRF-01"),
        ({"CTX-08": "a file?"}, "CTX-08"),
    ],
)
def test_each_wrong_type_is_named_by_its_code(personas, assessment, client_as, answers, code):
    response = client_as(personas.ava).patch(url(assessment), {"answers": answers}, format="json")

    assert response.status_code == 400
    assert list(response.json()["errors"]) == [code]
    assert not Answer.objects.exists()


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({}, "non_field_errors"),
        ({"answers": "PRF-01=x"}, "answers"),
        ({"answers": ["PRF-01"]}, "answers"),
        ({"comments": "text"}, "comments"),
        ({"answer": {"PRF-01": "x"}}, "answer"),
        ({"comments": {"PRF-01": 5}}, "PRF-01"),
    ],
)
def test_a_malformed_body_is_a_400(personas, assessment, client_as, body, key):
    response = client_as(personas.ava).patch(url(assessment), body, format="json")

    assert response.status_code == 400
    assert list(response.json()["errors"]) == [key]
    assert not Answer.objects.exists()


def test_answers_cannot_change_once_submitted(personas, scored, client_as):
    before = stored(scored)

    response = client_as(personas.ava).patch(
        url(scored), {"answers": {"PRF-01": "Changed"}}, format="json"
    )

    assert response.status_code == 409
    assert list(response.json()["errors"]) == ["status"]
    assert stored(scored) == before


@pytest.mark.parametrize("role", ["rex", "vic"])
def test_reviewers_and_viewers_may_not_answer(personas, assessment, client_as, role):
    response = client_as(getattr(personas, role)).patch(
        url(assessment), {"answers": {"PRF-01": "x"}}, format="json"
    )
    assert response.status_code == 403
    assert not Answer.objects.exists()


def test_the_use_section_needs_its_own_capability(personas, assessment, client_as, monkeypatch):
    # A role that may edit assessments but not answer the buyer's questions.
    monkeypatch.setitem(
        ROLE_CAPABILITIES, Role.ASSESSOR, frozenset({Capability.VIEW, Capability.EDIT_ASSESSMENT})
    )
    client = client_as(personas.ava)

    refused = client.patch(
        url(assessment), {"answers": {"PRF-01": "x", "USE-01": "public"}}, format="json"
    )
    allowed = client.patch(url(assessment), {"answers": {"PRF-01": "x"}}, format="json")

    assert refused.status_code == 403
    assert list(refused.json()["errors"]) == ["USE-01"]
    assert allowed.status_code == 200
    assert set(stored(assessment)) == {"PRF-01"}


def test_vendor_questions_need_edit_assessment(personas, assessment, client_as, monkeypatch):
    # A role that may answer only the buyer's questions.
    monkeypatch.setitem(
        ROLE_CAPABILITIES,
        Role.ASSESSOR,
        frozenset({Capability.VIEW, Capability.ANSWER_USE_SECTION}),
    )
    client = client_as(personas.ava)

    refused = client.patch(
        url(assessment), {"answers": {"PRF-01": "x", "USE-01": "public"}}, format="json"
    )
    allowed = client.patch(url(assessment), {"answers": {"USE-01": "public"}}, format="json")

    assert refused.status_code == 403
    assert list(refused.json()["errors"]) == ["PRF-01"]
    assert allowed.status_code == 200
    assert Assessment.objects.get().answers.get().question_code == "USE-01"


def test_a_token_saves_answers_too(personas, assessment, token_client):
    response = token_client(personas.ava, personas.acme).patch(
        url(assessment), {"answers": {"USE-01": "regulated"}}, format="json"
    )
    assert response.status_code == 200
    assert stored(assessment) == {"USE-01": ("regulated", "")}


@pytest.fixture
def assessment_v3(catalog, personas, vendor):
    from assessments.models import Channel
    from assessments.services.answers import assessment_create

    return assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@3",
        actor=personas.ava,
        channel=Channel.WEB,
    )


@pytest.mark.parametrize(
    ("answers", "code"),
    [
        ({"KV-10": "salt"}, "KV-10"),
        ({"KV-11": "yes"}, "KV-11"),  # v3's options are yes_tested and yes_documented
        ({"KV-12": ["LMCache"]}, "KV-12"),
    ],
)
def test_the_questions_of_v3_refuse_what_is_not_their_type(
    personas, assessment_v3, client_as, answers, code
):
    response = client_as(personas.ava).patch(
        url(assessment_v3), {"answers": answers}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()["errors"]) == [code]
    assert not Answer.objects.exists()


def test_the_questions_of_v3_are_saved_and_unknown_to_v1(
    personas, assessment, assessment_v3, client_as
):
    client = client_as(personas.ava)
    answers = {"KV-10": "salt_set_by_gateway", "KV-11": "yes_tested", "KV-12": "LMCache 0.3"}

    saved = client.patch(url(assessment_v3), {"answers": answers}, format="json")
    refused = client.patch(url(assessment), {"answers": {"KV-10": "unknown"}}, format="json")

    assert saved.status_code == 200
    assert saved.json()["changed"] == ["KV-10", "KV-11", "KV-12"]
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["KV-10"]
