"""Conformance to the public contract (the shared spec's api.md, v2.md, probe.md): each test names
the statement of the contract it holds the implementation to."""

import csv
import io

import pytest

from tests.portfolio.conftest import V1, V2, scored_with

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


@pytest.fixture
def finished_batch(catalog, personas, token_client, settings, django_capture_on_commit_callbacks):
    """A rescore batch of Acme (one assessment scored with v1, rescored with v2), done."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    scored_with(
        V1,
        organization=personas.acme,
        actor=personas.ava,
        vendor_name="Inferno AI",
        fixture="incident-2026-launch",
    )
    client = token_client(personas.ava, personas.acme)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/rescore-batches/", {"ruleset": V2}, format="json")
    assert response.status_code == 202
    return response.json()["id"]


@pytest.mark.parametrize("accept", ["text/csv", "text/csv, */*;q=0.1", "*/*"])
def test_the_changes_csv_is_served_to_a_client_that_asks_for_csv(
    finished_batch, personas, token_client, accept
):
    """api.md: `GET rescore-batches/{id}/changes.csv` is the same as CSV — also for a client
    that says it accepts CSV (the schema answers it as `text/csv`), as every other download
    of the API does (reports, findings and portfolio exports)."""
    client = token_client(personas.vic, personas.acme)
    response = client.get(
        f"/api/v1/rescore-batches/{finished_batch}/changes.csv", HTTP_ACCEPT=accept
    )
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [row["after_ruleset"] for row in rows] == [V2]


def _documented_statuses(client, path, method):
    schema = client.get("/api/schema/?format=json").json()
    return set(schema["paths"][path][method]["responses"])


def test_a_json_body_over_the_size_limit_is_the_413_the_schema_documents(
    personas, token_client, settings
):
    """The schema (and docs/api.md) document 413 "The body is over the size limits" on every
    operation with a body; the API answered such a body with a 400 instead."""
    client = token_client(personas.ava, personas.acme)
    assert "413" in _documented_statuses(client, "/api/v1/vendors/", "post")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000

    response = client.post("/api/v1/vendors/", {"name": "X", "notes": "y" * 20_000}, format="json")

    assert response.status_code == 413, response.content
    assert list(response.json()["errors"]) == ["body"]


def test_a_form_body_over_the_size_limit_is_a_413_too(personas, token_client, assessment, settings):
    client = token_client(personas.ava, personas.acme)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000

    response = client.post(
        f"/api/v1/assessments/{assessment.pk}/evidence/",
        {"question": "CTX-08", "comment": "y" * 20_000, "file": io.BytesIO(b"log")},
        format="multipart",
    )

    assert response.status_code == 413, response.content
    assert list(response.json()["errors"]) == ["body"]


def test_the_schema_types_answer_comments_as_the_text_the_api_takes(
    personas, token_client, assessment
):
    """api.md: PATCH answers takes `{"answers": {...}, "comments": {...}}`; a comment is text
    (questionnaire-v1.md: at most 4,000 characters). The schema typed a comment as any JSON
    value, so a client generated from it could send a number that the API then refuses."""
    client = token_client(personas.ava, personas.acme)
    schema = client.get("/api/schema/?format=json").json()
    body = schema["components"]["schemas"]["PatchedAnswersInputRequest"]["properties"]
    comment = body["comments"]["additionalProperties"]
    assert comment["type"] == "string"
    assert comment["maxLength"] == 4000
    assert comment.get("nullable") is True  # null clears a comment, like ""

    refused = client.patch(
        f"/api/v1/assessments/{assessment.pk}/answers/", {"comments": {"CTX-02": 5}}, format="json"
    )
    assert refused.status_code == 400
    assert list(refused.json()["errors"]) == ["CTX-02"]


def test_the_schema_documents_the_507_of_an_evidence_upload_on_a_full_disk(personas, token_client):
    """The evidence upload answers 507 `{"errors": {...}}` when the file cannot be written (a
    full disk, nothing saved: tests/security); every error status of an operation is
    documented, this one was not."""
    client = token_client(personas.vic, personas.acme)
    path = "/api/v1/assessments/{assessment_id}/evidence/"
    responses = client.get("/api/schema/?format=json").json()["paths"][path]["post"]["responses"]
    assert "507" in responses
    schema = responses["507"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/Errors"}


def _component(client, name):
    return client.get("/api/schema/?format=json").json()["components"]["schemas"][name]


def test_the_schemas_evidence_kinds_are_every_kind_a_finding_can_show(personas, token_client):
    """Issue 28: a finding's probe evidence (`kind: probe`) was outside the schema's enum
    (schemathesis ST108 on GET assessments/{id}/)."""
    from scoring.results import EvidenceKind

    client = token_client(personas.vic, personas.acme)
    kinds = {value for name, value in vars(EvidenceKind).items() if name.isupper()}
    assert set(_component(client, "KindEnum")["enum"]) == kinds
    assert {"probe", "model"} <= kinds


def test_an_empty_website_is_what_the_schema_and_the_api_both_take(personas, token_client, vendor):
    """Issue 28: PATCH vendors/{id}/ took {"website": ""} (a vendor's website is "a URL, or
    empty"), which the schema's oneOf refused: "" matched both of its branches."""
    import jsonschema

    client = token_client(personas.ava, personas.acme)
    for name in ("VendorInputRequest", "PatchedVendorInputRequest"):
        website = _component(client, name)["properties"]["website"]
        jsonschema.validate("", website)
        jsonschema.validate("https://inferno.example/ai", website)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate("ftp://inferno.example", website)
    response = client.patch(f"/api/v1/vendors/{vendor.pk}/", {"website": ""}, format="json")
    assert response.status_code == 200 and response.json()["website"] == ""
