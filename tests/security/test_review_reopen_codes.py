"""Questions are re-opened only by a request for changes: a sign-off that names questions
(an API body, or boxes left ticked on the review page) re-opens none, and never creates an
answer for a code the questionnaire does not have."""

import pytest
from django.test import Client
from django.urls import reverse

from assessments.factories import critical_rule_ids
from assessments.models import Answer


def _reopened(assessment) -> set[str]:
    return set(
        Answer.objects.filter(assessment=assessment, reopened=True).values_list(
            "question_code", flat=True
        )
    )


@pytest.mark.django_db
def test_an_approval_through_the_api_reopens_nothing(personas, scored, client_as):
    response = client_as(personas.rex).post(
        f"/api/v1/assessments/{scored.pk}/review/",
        {
            "decision": "approved",
            "reopen_codes": ["USE-01", "CTX-01", "BOGUS-99"],
            "acknowledged_findings": critical_rule_ids(scored),
        },
        format="json",
    )

    assert response.status_code == 201
    assert response.json()["reopen_codes"] == []
    assert _reopened(scored) == set()
    assert not Answer.objects.filter(assessment=scored, question_code="BOGUS-99").exists()
    detail = client_as(personas.rex).get(f"/api/v1/assessments/{scored.pk}/").json()
    assert detail["reopened"] == []


@pytest.mark.django_db
def test_a_rejection_on_the_review_page_with_boxes_ticked_reopens_nothing(personas, scored):
    client = Client()
    client.force_login(personas.rex)
    response = client.post(
        reverse("assessments:review", args=[scored.pk]),
        {"decision": "rejected", "reopen_codes": ["CTX-01", "CTX-02"]},
    )

    assert response.status_code == 302
    assert _reopened(scored) == set()
    assert scored.reviews.get().reopened_codes == []
