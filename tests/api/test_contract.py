"""Regressions of the classes of contract bugs schemathesis found (tests/contract)."""

import pytest
import yaml
from django.core.management import call_command

from assessments.models import Vendor

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def test_a_body_of_the_wrong_json_type_is_refused_not_coerced(personas, client_as):
    client = client_as(personas.ava)
    number_as_name = client.post("/api/v1/vendors/", {"name": 0}, format="json")
    text_as_id = client.post(
        "/api/v1/assessments/",
        {"vendor": "1", "questionnaire": "ai-inference-isolation@1"},
        format="json",
    )

    assert number_as_name.status_code == text_as_id.status_code == 400
    assert number_as_name.json() == {"errors": {"name": ["Not a valid string."]}}
    assert list(text_as_id.json()["errors"]) == ["vendor"]
    assert not Vendor.objects.exists()


def test_an_empty_filter_value_is_refused(personas, client_as):
    response = client_as(personas.vic).get("/api/v1/assessments/?due_before=")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["due_before"]


def test_a_blank_website_is_valid_in_the_response_schema(personas, client_as):
    response = client_as(personas.ava).post("/api/v1/vendors/", {"name": "X"}, format="json")
    assert response.status_code == 201
    assert response.json()["website"] == ""


def test_every_operation_documents_the_shared_errors_and_closed_bodies(tmp_path):
    path = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text())
    components = schema["components"]["schemas"]
    for operations in schema["paths"].values():
        for method, operation in operations.items():
            assert {"401", "403", "404"} <= set(operation["responses"]), method
            if "requestBody" in operation:
                assert {"400", "409", "413", "415"} <= set(operation["responses"]), method
                for media in operation["requestBody"]["content"].values():
                    name = media["schema"]["$ref"].rsplit("/", 1)[-1]
                    assert components[name]["additionalProperties"] is False, name
    website = components["Vendor"]["properties"]["website"]
    assert {"type": "string", "maxLength": 0} in website["oneOf"]
