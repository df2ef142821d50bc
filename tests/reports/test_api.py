"""The report endpoints of REST API v1: POST assessments/{id}/reports/ and GET reports/{id}/,
plus the PDF download; token and session clients, every persona, other organizations 404."""

import hashlib

import pytest
import yaml
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.services import api_token_create
from reports.models import Report

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.reports.urls")]


@pytest.fixture
def token_client():
    def make(user, organization) -> APIClient:
        _token, key = api_token_create(user=user, organization=organization, name="tests")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        return client

    return make


def reports_url(assessment) -> str:
    return f"/api/v1/assessments/{assessment.pk}/reports/"


def test_requesting_a_report_answers_202_with_its_id(scored, personas, token_client, inline_tasks):
    client = token_client(personas.ava, personas.acme)

    with inline_tasks():
        response = client.post(reports_url(scored), {"language": "zh-hant"}, format="json")

    assert response.status_code == 202
    body = response.json()
    report = Report.objects.get()
    assert body["id"] == report.pk and body["number"] == report.number
    assert body["status"] == "queued"  # as it was when the request was answered
    assert (body["language"], body["run"], body["assessment"]) == (
        "zh-hant",
        scored.latest_run_id,
        scored.pk,
    )
    assert body["sha256"] is None and body["download"] is None


def test_a_ready_report_has_its_checksum_and_download_address(ready_report, personas, token_client):
    client = token_client(personas.vic, personas.acme)

    body = client.get(f"/api/v1/reports/{ready_report.pk}/").json()
    download = client.get(body["download"])

    assert body["status"] == "ready"
    assert body["sha256"] == ready_report.sha256
    assert body["ruleset"] == "incident-2026-kv@3"
    assert body["pages"] == ready_report.pages and body["size"] == ready_report.size
    assert body["download"] == f"http://testserver/api/v1/reports/{ready_report.pk}/download/"
    assert download.status_code == 200
    assert download["Content-Type"] == "application/pdf"
    assert download["Content-Disposition"].startswith("attachment; ")
    assert hashlib.sha256(download.content).hexdigest() == ready_report.sha256


def test_the_download_is_a_pdf_whatever_the_accept_header(ready_report, personas, token_client):
    client = token_client(personas.vic, personas.acme)
    url = f"/api/v1/reports/{ready_report.pk}/download/"

    assert client.get(url, HTTP_ACCEPT="application/pdf").status_code == 200
    missing = client.get("/api/v1/reports/999999/download/", HTTP_ACCEPT="application/pdf")
    assert missing.status_code == 404
    assert missing.json() == {"errors": {"not_found": ["Not found."]}}


def test_an_older_run_can_be_requested(scored, personas, token_client):
    client = token_client(personas.rex, personas.acme)

    response = client.post(
        reports_url(scored), {"language": "en", "run": scored.latest_run_id}, format="json"
    )

    assert response.status_code == 202 and response.json()["run"] == scored.latest_run_id


def test_invalid_input_is_a_400_in_the_error_format(scored, personas, token_client):
    client = token_client(personas.ava, personas.acme)

    bad_language = client.post(reports_url(scored), {"language": "fr"}, format="json")
    unknown_field = client.post(
        reports_url(scored), {"language": "en", "lang": "en"}, format="json"
    )

    assert bad_language.status_code == 400 and "language" in bad_language.json()["errors"]
    assert unknown_field.status_code == 400 and "lang" in unknown_field.json()["errors"]
    assert not Report.objects.exists()


def test_a_viewer_may_read_but_not_request(ready_report, personas, token_client):
    client = token_client(personas.vic, personas.acme)

    response = client.post(reports_url(ready_report.assessment), {"language": "en"}, format="json")

    assert response.status_code == 403
    assert client.get(f"/api/v1/reports/{ready_report.pk}/").status_code == 200


def test_an_outsider_gets_404_everywhere(ready_report, personas, token_client):
    client = token_client(personas.oscar, personas.other)
    assessment = ready_report.assessment

    assert (
        client.post(reports_url(assessment), {"language": "en"}, format="json").status_code == 404
    )
    assert client.get(f"/api/v1/reports/{ready_report.pk}/").status_code == 404
    assert client.get(f"/api/v1/reports/{ready_report.pk}/download/").status_code == 404


def test_a_run_of_another_organization_is_a_404(scored, personas, token_client):
    from assessments.models import Channel
    from assessments.services.answers import assessment_create
    from assessments.services.vendors import vendor_create

    vendor = vendor_create(
        organization=personas.other, actor=personas.oscar, channel=Channel.API, name="Own Co"
    )
    own = assessment_create(
        organization=personas.other,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@1",
        actor=personas.oscar,
        channel=Channel.API,
    )

    response = token_client(personas.oscar, personas.other).post(
        reports_url(own), {"language": "en", "run": scored.latest_run_id}, format="json"
    )

    assert response.status_code == 404
    assert not Report.objects.exists()


def test_a_report_that_is_not_ready_cannot_be_downloaded(
    scored, personas, token_client, django_capture_on_commit_callbacks
):
    client = token_client(personas.ava, personas.acme)
    with django_capture_on_commit_callbacks(execute=False):
        report_id = client.post(reports_url(scored), {"language": "en"}, format="json").json()["id"]

    response = client.get(f"/api/v1/reports/{report_id}/download/")

    assert response.status_code == 409
    assert "status" in response.json()["errors"]


def test_a_stored_file_that_no_longer_matches_is_a_409_not_a_500(
    ready_report, personas, token_client
):
    import os

    from reports.storage import report_storage

    path = report_storage().path(ready_report.storage_name)
    os.chmod(path, 0o640)
    with open(path, "ab") as handle:
        handle.write(b"%% appended")

    response = token_client(personas.vic, personas.acme).get(
        f"/api/v1/reports/{ready_report.pk}/download/"
    )

    assert response.status_code == 409
    assert "no longer matches" in response.json()["errors"]["file"][0]


def test_an_unscored_assessment_is_a_409(catalog, personas, token_client):
    from assessments.models import Channel
    from assessments.services.answers import assessment_create
    from assessments.services.vendors import vendor_create

    vendor = vendor_create(
        organization=personas.acme, actor=personas.ava, channel=Channel.API, name="Draft Co"
    )
    draft = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@1",
        actor=personas.ava,
        channel=Channel.API,
    )

    response = token_client(personas.ava, personas.acme).post(
        reports_url(draft), {"language": "en"}, format="json"
    )

    assert response.status_code == 409 and "run" in response.json()["errors"]


def test_the_schema_documents_the_report_endpoints_without_warnings(tmp_path):
    path = tmp_path / "schema.yaml"
    # --fail-on-warn raises on any warning, so returning at all means a clean schema.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text())

    assert set(schema["paths"]) == {
        "/api/v1/assessments/{assessment_id}/reports/",
        "/api/v1/reports/{report_id}/",
        "/api/v1/reports/{report_id}/download/",
        "/api/v1/portfolio-reports/",
        "/api/v1/portfolio-reports/{portfolio_report_id}/",
        "/api/v1/portfolio-reports/{portfolio_report_id}/download/",
    }
    download = schema["paths"]["/api/v1/reports/{report_id}/download/"]["get"]["responses"]
    assert "application/pdf" in download["200"]["content"]
