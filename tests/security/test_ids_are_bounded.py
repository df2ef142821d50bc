"""Ids in forms, URLs and API bodies are bounded in one place (core.ids): a number no row can
have (2**63, or 400 digits) is a 404 in a URL and a clear 400 in a form or a body, never a 500
("Python int too large to convert to SQLite INTEGER"). Issue 28, item 5."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from assessments.models import Assessment

pytestmark = pytest.mark.django_db

TOO_LARGE = [str(2**63), "9" * 400]


def member_client(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.mark.parametrize("organization_id", TOO_LARGE)
def test_switching_to_an_id_no_organization_can_have_is_a_bad_request(personas, organization_id):
    response = member_client(personas.ava).post(
        reverse("accounts:switch_organization"), {"organization_id": organization_id}
    )
    assert response.status_code == 400


@pytest.mark.parametrize("huge", TOO_LARGE)
@pytest.mark.parametrize(
    "path",
    [
        "/assessments/{}/",
        "/assessments/{}/edit/",
        "/assessments/{}/findings/",
        "/vendors/{}/",
        "/links/{}/revoke/",
        "/reports/{}/",
        "/rescore/batches/{}/",
        "/probe-runs/{}/progress/",
        "/accounts/orgs/acme-procurement/members/{}/role/",
        "/api/v1/assessments/{}/",
        "/api/v1/vendors/{}/",
        "/api/v1/reports/{}/",
        "/api/v1/assessments/1/runs/{}/",
    ],
)
def test_a_url_naming_an_id_no_row_can_have_is_404(personas, path, huge):
    client = member_client(personas.alice)
    assert client.get(path.format(huge)).status_code == 404
    assert client.post(path.format(huge)).status_code in (404, 405)


@pytest.mark.parametrize("huge", TOO_LARGE)
def test_a_new_assessment_for_a_vendor_id_no_row_can_have_is_refused(catalog, personas, huge):
    response = member_client(personas.ava).post(
        reverse("assessments:create"),
        {
            "vendor": huge,
            "questionnaire": "ai-inference-isolation@1",
            "rendered_for": "ai-inference-isolation@1",
        },
    )
    assert response.status_code == 400
    assert "vendor" in response.context["form"].errors
    assert not Assessment.objects.exists()


@pytest.mark.parametrize("huge", [2**63, int("9" * 400)])
def test_the_api_refuses_a_vendor_id_no_row_can_have(catalog, personas, client_as, huge):
    response = client_as(personas.ava).post(
        "/api/v1/assessments/",
        {"vendor": huge, "questionnaire": "ai-inference-isolation@1"},
        format="json",
    )
    assert response.status_code == 400
    assert "vendor" in response.json()["errors"]
    assert not Assessment.objects.exists()
