"""The report pages: request, status, download and verification, for every persona."""

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from reports.models import Report
from reports.services import report_file

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.reports.urls")]


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def reports_url(assessment) -> str:
    return f"/assessments/{assessment.pk}/reports/"


def pdf_upload(data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile("report.pdf", data, content_type="application/pdf")


@pytest.mark.parametrize("member", ["ava", "rex", "alice"])
def test_assessors_reviewers_and_owners_can_generate_a_report(
    scored, personas, inline_tasks, member
):
    client = client_for(getattr(personas, member))

    with inline_tasks():
        response = client.post(
            reports_url(scored), {"language": "zh-hant", "run": scored.latest_run_id}
        )

    report = Report.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/reports/{report.pk}/"
    assert (report.language, report.status, report.requested_by) == (
        "zh-hant",
        "ready",
        getattr(personas, member),
    )


def test_a_viewer_sees_the_reports_but_cannot_generate_one(scored, personas):
    client = client_for(personas.vic)

    page = client.get(reports_url(scored))
    response = client.post(reports_url(scored), {"language": "en", "run": scored.latest_run_id})

    assert page.status_code == 200 and b"Generate PDF report" not in page.content
    assert response.status_code == 403
    assert not Report.objects.exists()


def test_an_outsider_cannot_see_or_generate_reports_of_another_organization(scored, personas):
    client = client_for(personas.oscar)

    assert client.get(reports_url(scored)).status_code == 404
    response = client.post(reports_url(scored), {"language": "en", "run": scored.latest_run_id})
    assert response.status_code == 404
    assert not Report.objects.exists()


def test_the_reports_page_lists_reports_and_offers_every_finished_run(ready_report, personas):
    page = client_for(personas.ava).get(reports_url(ready_report.assessment))

    assert page.status_code == 200
    assert ready_report.number.encode() in page.content
    assert f'value="{ready_report.run_id}"'.encode() in page.content


def test_anonymous_visitors_are_sent_to_log_in(ready_report):
    response = Client().get(f"/reports/{ready_report.pk}/")

    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_status_page_shows_the_checksum_of_a_ready_report(ready_report, personas):
    page = client_for(personas.vic).get(f"/reports/{ready_report.pk}/")

    assert page.status_code == 200
    assert ready_report.number.encode() in page.content
    assert ready_report.sha256.encode() in page.content
    assert f"/reports/{ready_report.pk}/download/".encode() in page.content
    assert b'http-equiv="refresh"' not in page.content


def test_the_status_page_of_a_pending_report_refreshes_itself(
    scored, personas, django_capture_on_commit_callbacks
):
    client = client_for(personas.ava)
    with django_capture_on_commit_callbacks(execute=False):  # no worker: stays queued
        client.post(reports_url(scored), {"language": "en", "run": scored.latest_run_id})
    report = Report.objects.get()

    page = client.get(f"/reports/{report.pk}/")
    download = client.get(f"/reports/{report.pk}/download/")

    # it updates itself in place (htmx), not by reloading: tests/reports/test_status_page.py
    assert f'hx-get="/reports/{report.pk}/" hx-trigger="every 3s"'.encode() in page.content
    assert b"Queued" in page.content
    assert download.status_code == 302 and download["Location"] == f"/reports/{report.pk}/"


def test_a_failed_report_shows_its_reason(scored, personas):
    report = Report.objects.create(
        organization=personas.acme,
        assessment=scored,
        run=scored.latest_run,
        language="en",
        number="AVIA-2026-999999",
        status="failed",
        error="OSError: disk full",
    )

    page = client_for(personas.vic).get(f"/reports/{report.pk}/")

    assert b"Failed" in page.content and b"OSError: disk full" in page.content


def test_a_viewer_downloads_the_stored_pdf_as_an_attachment(ready_report, personas):
    response = client_for(personas.vic).get(f"/reports/{ready_report.pk}/download/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == (
        f'attachment; filename="{ready_report.number}-en.pdf"'
    )
    assert hashlib.sha256(response.content).hexdigest() == ready_report.sha256


@pytest.mark.parametrize("damage", ["altered", "missing"])
def test_a_stored_file_that_no_longer_matches_is_refused_with_a_message_not_a_500(
    ready_report, personas, damage
):
    import os

    from reports.storage import report_storage

    path = report_storage().path(ready_report.storage_name)
    os.chmod(path, 0o640)
    if damage == "altered":
        with open(path, "ab") as handle:
            handle.write(b"%% appended")
    else:
        os.remove(path)
    client = client_for(personas.vic)

    response = client.get(f"/reports/{ready_report.pk}/download/", follow=True)

    assert response.status_code == 200
    assert response.redirect_chain == [(f"/reports/{ready_report.pk}/", 302)]
    assert "no longer matches" in response.content.decode()


def test_an_outsider_gets_404_on_status_and_download(ready_report, personas):
    client = client_for(personas.oscar)

    assert client.get(f"/reports/{ready_report.pk}/").status_code == 404
    assert client.get(f"/reports/{ready_report.pk}/download/").status_code == 404
    assert client.get("/reports/999999/").status_code == 404  # same as a missing one


def test_verifying_an_unaltered_report_names_its_assessment_and_ruleset(ready_report, personas):
    data = report_file(report=ready_report)

    page = client_for(personas.vic).post("/reports/verify/", {"file": pdf_upload(data)})

    assert page.status_code == 200
    content = page.content.decode()
    assert "This is an unaltered AVIA report." in content and "result-pass" in content
    assert ready_report.number in content
    assert "Cloud Inference Co" in content
    assert "incident-2026-kv@3" in content
    assert ready_report.sha256 in content


def test_verifying_an_altered_report_says_not_found(ready_report, personas):
    data = report_file(report=ready_report) + b"\n% one more line\n"  # still opens as a PDF

    page = client_for(personas.ava).post("/reports/verify/", {"file": pdf_upload(data)})

    assert b"Not verified" in page.content and b"result-fail" in page.content
    assert ready_report.number.encode() not in page.content


def test_verifying_another_organizations_report_says_not_found(ready_report, personas):
    data = report_file(report=ready_report)

    page = client_for(personas.oscar).post("/reports/verify/", {"file": pdf_upload(data)})

    assert page.status_code == 200
    assert b"Not verified" in page.content and b"result-fail" in page.content
    assert ready_report.number.encode() not in page.content


def test_the_verification_page_asks_for_a_file(personas):
    client = client_for(personas.vic)

    assert client.get("/reports/verify/").status_code == 200
    assert client.post("/reports/verify/", {}).status_code == 200  # the form shows its error


def test_the_assessment_page_block_lists_reports_and_offers_the_form(ready_report, personas, rf):
    from django.template.loader import render_to_string

    from accounts.tenancy import OrgContext
    from assessments.views.common import capabilities

    assessment = ready_report.assessment

    def block(user):
        membership = user.memberships.get(organization=personas.acme)
        org = OrgContext(user=user, organization=personas.acme, membership=membership)
        request = rf.get("/")
        request.user = user
        context = {
            "assessment": assessment,
            "run": assessment.latest_run,
            "org": org,
            "can": capabilities(org),
            "runs": assessment.runs.all(),
        }
        return render_to_string("reports/_assessment_reports.html", context, request=request)

    for_reviewer, for_viewer = block(personas.rex), block(personas.vic)

    assert ready_report.number in for_reviewer and ready_report.number in for_viewer
    assert f"/reports/{ready_report.pk}/download/" in for_viewer
    assert "Generate PDF report" in for_reviewer
    assert "Generate PDF report" not in for_viewer


def test_the_one_click_form_reports_on_the_latest_run(scored, personas, inline_tasks):
    with inline_tasks():
        response = client_for(personas.rex).post(reports_url(scored), {"language": "en"})

    report = Report.objects.get()
    assert response.status_code == 302
    assert (report.run_id, report.status) == (scored.latest_run_id, "ready")


def test_verifying_a_file_that_is_not_a_pdf_says_so_beside_the_field(personas):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("scores.csv", b"vendor,score\nAcme,100\n", "text/csv")
    page = client_for(personas.vic).post("/reports/verify/", {"file": upload})

    content = page.content.decode()
    assert "This file is not a PDF, so it cannot be an AVIA report." in content
    assert 'class="error-message" id="id_file_error"' in content
    assert "Not verified" not in content and "result-fail" not in content
