import tomllib
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

CONTRACT_CONFIG = Path(__file__).parents[1] / "contract" / "schemathesis.toml"

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]

ENDPOINTS = {
    "/api/v1/assessments/{assessment_id}/reports/": {"post"},
    "/api/v1/reports/{report_id}/": {"get"},
    "/api/v1/reports/{report_id}/download/": {"get"},
    "/api/v1/portfolio-reports/": {"post"},
    "/api/v1/portfolio-reports/{portfolio_report_id}/": {"get"},
    "/api/v1/portfolio-reports/{portfolio_report_id}/download/": {"get"},
    "/api/v1/questionnaires/": {"get"},
    "/api/v1/questionnaires/{slug}/": {"get"},
    "/api/v1/vendors/": {"get", "post"},
    "/api/v1/vendors/{vendor_id}/": {"get", "patch"},
    "/api/v1/assessments/": {"get", "post"},
    "/api/v1/assessments/{assessment_id}/": {"get"},
    "/api/v1/assessments/{assessment_id}/answers/": {"patch"},
    "/api/v1/assessments/{assessment_id}/evidence/": {"post"},
    "/api/v1/assessments/{assessment_id}/submit/": {"post"},
    "/api/v1/assessments/{assessment_id}/rescore/": {"post"},
    "/api/v1/assessments/{assessment_id}/runs/{run_id}/": {"get"},
    "/api/v1/assessments/{assessment_id}/review/": {"post"},
    "/api/v1/assessments/{assessment_id}/audit/": {"get"},
    "/api/v1/assessments/{assessment_id}/probe/": {"get"},
    "/api/v1/assessments/{assessment_id}/probe-runs/": {"post"},
    "/api/v1/probe-runs/{probe_run_id}/": {"get"},
    "/api/v1/rescore-batches/": {"get", "post"},
    "/api/v1/rescore-batches/{batch_id}/": {"get"},
    "/api/v1/rescore-batches/{batch_id}/changes.csv": {"get"},
    "/api/v1/assessments/{assessment_id}/findings.{file_format}": {"get"},
    "/api/v1/portfolio.{file_format}": {"get"},
}


@pytest.fixture
def schema(tmp_path):
    path = tmp_path / "schema.yaml"
    # --fail-on-warn raises on any warning, so returning at all means a clean schema.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def test_the_schema_validates_without_warnings_and_lists_every_endpoint(schema):
    paths = {
        path: {method for method in operations if method != "parameters"}
        for path, operations in schema["paths"].items()
    }
    assert paths == ENDPOINTS


def test_the_schema_documents_the_list_filters(schema):
    parameters = schema["paths"]["/api/v1/assessments/"]["get"]["parameters"]
    by_name = {p["name"]: p for p in parameters}
    assert set(by_name) == {
        "status", "tier", "vendor", "due_before", "due_after", "page", "cursor"
    }  # fmt: skip
    assert by_name["vendor"]["schema"]["type"] == "integer"
    assert by_name["due_before"]["schema"] == {"type": "string", "format": "date"}
    assert "scored" in by_name["status"]["schema"]["enum"]


def test_the_schema_documents_the_error_body(schema):
    responses = schema["paths"]["/api/v1/assessments/{assessment_id}/answers/"]["patch"][
        "responses"
    ]
    assert {"200", "400", "401", "403", "404", "409"} <= set(responses)
    error = responses["400"]["content"]["application/json"]["schema"]["$ref"]
    assert error == "#/components/schemas/Errors"


def test_the_evidence_upload_is_multipart(schema):
    body = schema["paths"]["/api/v1/assessments/{assessment_id}/evidence/"]["post"]["requestBody"]
    assert set(body["content"]) == {"multipart/form-data"}


def test_the_schema_and_the_docs_are_served(client):
    schema = client.get("/api/schema/")
    docs = client.get("/api/docs/")

    assert schema.status_code == 200
    assert b"/api/v1/assessments/" in schema.content
    assert docs.status_code == 200
    assert b"swagger-ui" in docs.content


def test_a_body_naming_what_does_not_exist_is_the_400_the_schema_documents(schema):
    """A body that names an object, a catalogue key or a question code that does not exist in
    the caller's organization is invalid input: a 400 naming the field, never a 404. Every
    operation whose schema-valid data the contract run (tests/contract/schemathesis.toml) lets
    answer 400 documents that 400, and the two references schemathesis tried name their field."""
    config = tomllib.loads(CONTRACT_CONFIG.read_text())
    descriptions = {}
    for operation in config["operations"]:
        statuses = operation["checks"]["positive_data_acceptance"]["expected-statuses"]
        if "400" not in statuses:
            continue
        method, path = operation["include-name"].split(" ", 1)
        response = schema["paths"][path][method.lower()]["responses"]["400"]
        descriptions[operation["include-name"]] = response["description"]
        assert "never a 404" in response["description"], operation["include-name"]
    assert "`vendor`" in descriptions["POST /api/v1/assessments/"]
    assert "`ruleset`" in descriptions["POST /api/v1/rescore-batches/"]


def test_a_400_without_its_own_words_reads_the_shared_description(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            bad = operation.get("responses", {}).get("400")
            if bad is not None:
                assert bad["description"], f"{method.upper()} {path}"


def test_a_name_that_trims_to_nothing_is_outside_the_schema_as_the_api_refuses_it(
    schema, client, personas
):
    """Schemathesis sent a vendor named "\\r": schema-valid, refused as blank. The schema of a
    field that may not be blank now asks for a character that is not a space."""
    import re

    name = schema["components"]["schemas"]["VendorInputRequest"]["properties"]["name"]
    notes = schema["components"]["schemas"]["VendorInputRequest"]["properties"]["notes"]
    for blank in ("\r", " ", "\t\n", "\u3000"):
        assert not re.match(name["pattern"], blank), repr(blank)
        assert re.match(notes["pattern"], blank), repr(blank)  # notes may be blank
    assert re.match(name["pattern"], " Cloud Inference Co ")
    client.force_login(personas.ava)
    refused = client.post("/api/v1/vendors/", {"name": "\r"}, content_type="application/json")
    assert refused.status_code == 400 and "name" in refused.json()["errors"]
