"""A member who opens an API address in a browser gets the JSON, never a server error (the
API is JSON only: api.md's contract; its documentation is the OpenAPI page)."""

import pytest
from django.test import Client

from tests.web.conftest import make_draft

pytestmark = pytest.mark.django_db

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture
def draft(catalog, personas):
    return make_draft(personas)


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/assessments/",
        "/api/v1/assessments/{assessment}/",
        "/api/v1/assessments/{assessment}/audit/",
        "/api/v1/vendors/",
        "/api/v1/vendors/{vendor}/",
        "/api/v1/questionnaires/",
        "/api/v1/rescore-batches/",
    ],
)
def test_a_browser_gets_the_json(personas, draft, path):
    client = Client(raise_request_exception=False)
    client.force_login(personas.alice)

    response = client.get(
        path.format(assessment=draft.pk, vendor=draft.vendor_id), HTTP_ACCEPT=BROWSER
    )

    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert response.json()


def test_asking_for_html_only_is_not_acceptable(personas, draft):
    client = Client(raise_request_exception=False)
    client.force_login(personas.alice)

    response = client.get("/api/v1/assessments/", HTTP_ACCEPT="text/html")

    assert response.status_code == 406
    assert response.json()["errors"]
