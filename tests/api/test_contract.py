"""Regressions of the classes of contract bugs schemathesis found (tests/contract)."""

import io
import json
import re

import pytest
import yaml
from django.core.management import call_command

from assessments.models import Vendor
from assessments.serializers import WEBSITE_PATTERN
from core.text import READABLE_NOT_BLANK_PATTERN, READABLE_TEXT_PATTERN

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


def test_an_id_beyond_the_64_bit_range_is_a_400_not_a_500(catalog, personas, client_as):
    response = client_as(personas.alice).post(
        "/api/v1/rescore-batches/",
        {"ruleset": "incident-2026-kv@2", "assessments": [2**63]},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["assessments.0"]


def test_free_text_follows_the_schemas_pattern_which_is_the_hostile_text_rule(personas, client_as):
    schema = _schema()
    name = schema["components"]["schemas"]["VendorInputRequest"]["properties"]["name"]
    # A name may not be blank: the hostile text rule, and a character that is not a space.
    assert name["pattern"] == READABLE_NOT_BLANK_PATTERN
    client = client_as(personas.ava)
    # Every character the pattern refuses, the server refuses, and the reverse.
    for character in ["\x13", "\x7f", "\x85", "\u202e", "\u2066", "\t", "é", "\u3000"]:
        allowed = re.fullmatch(READABLE_TEXT_PATTERN, f"V{character}W") is not None
        assert allowed is (re.fullmatch(name["pattern"], f"V{character}W") is not None)
        response = client.post("/api/v1/vendors/", {"name": f"V{character}W"}, format="json")
        assert (response.status_code == 201) is allowed, (character, response.json())
    assert Vendor.objects.count() == 3  # tab, é and the ideographic space


def test_an_answers_patch_naming_nothing_is_refused_as_the_schema_says(
    assessment, personas, client_as
):
    body = _schema()["components"]["schemas"]["PatchedAnswersInputRequest"]
    assert body["minProperties"] == 1
    response = client_as(personas.ava).patch(
        f"/api/v1/assessments/{assessment.pk}/answers/", {}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["non_field_errors"]


@pytest.mark.parametrize("query", ["page=", "page=last", "page=0", "page=2&page=", "page=x"])
def test_a_page_other_than_one_whole_number_is_a_400(query, personas, client_as):
    response = client_as(personas.vic).get(f"/api/v1/vendors/?{query}")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["page"]


def test_a_website_the_schema_allows_is_one_the_model_keeps(personas, client_as):
    client = client_as(personas.ava)
    for index, website in enumerate(
        ["http://localhost:8000/x?y=1", "https://10.0.0.255/", "https://a-b.example.co.uk#top"]
    ):
        assert re.fullmatch(WEBSITE_PATTERN, website)
        response = client.post(
            "/api/v1/vendors/", {"name": f"V{index}", "website": website}, format="json"
        )
        assert response.status_code == 201, response.json()
    # Characters URLValidator would take but a "uri" (the response schema) may not hold.
    for website in ["http://!", "https://256.1.1.1/", "ftp://example.com", "https://a.bc/{`}"]:
        assert not re.fullmatch(WEBSITE_PATTERN, website)
        response = client.post("/api/v1/vendors/", {"name": "W", "website": website}, format="json")
        assert response.status_code == 400


def _schema() -> dict:
    out = io.StringIO()
    call_command("spectacular", "--format", "openapi-json", stdout=out)
    return json.loads(out.getvalue())
