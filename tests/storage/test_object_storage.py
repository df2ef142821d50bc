"""Evidence and reports in an S3-compatible object store (a moto server process): the same
services and views as on the disk, SHA-256 checks on the object's bytes, downloads only through
the permission-checked views, and a store that is away answered clearly with nothing kept."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from assessments.models import Channel, EvidenceFile
from assessments.services.answers import assessment_create
from assessments.services.evidence import evidence_add
from core.errors import StorageUnavailableError
from reports.models import Report
from reports.services import ReportIntegrityError, report_file, report_request
from tests.personas import member_of
from tests.reports.conftest import LOG, QUESTIONNAIRE

from .s3server import BUCKET, object_names, s3_client, s3_environment

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db
LOG_QUESTION = "CTX-08"


def files_under(root) -> list:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def draft(scored, personas):
    return assessment_create(
        organization=scored.organization,
        vendor=scored.vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
    )


def upload(assessment, personas, data: bytes):
    return evidence_add(
        assessment=assessment,
        question_code=LOG_QUESTION,
        upload=SimpleUploadedFile("startup.log", data, content_type="text/plain"),
        actor=personas.ava,
        channel=Channel.WEB,
    )


def test_evidence_is_stored_as_an_object_and_downloaded_through_the_view(
    object_store, s3_endpoint, scored, personas, settings
):
    data = LOG.read_bytes()
    evidence = upload(draft(scored, personas), personas, data)

    assert evidence.parsed is True
    assert evidence.sha256 == hashlib.sha256(data).hexdigest()
    key = f"{object_store}/evidence/{evidence.storage_name}"
    assert key in object_names(s3_endpoint)
    assert files_under(settings.MEDIA_ROOT) == []  # nothing on the local disk

    client = Client()
    client.force_login(personas.ava)
    url = reverse("assessments:evidence_download", args=[evidence.pk])
    response = client.get(url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == data
    # Another organization's member gets a 404, not the object.
    outsider = Client()
    outsider.force_login(personas.oscar)
    assert outsider.get(url).status_code == 404


def test_a_report_rendered_into_the_store_keeps_its_sha256_check(
    object_store, s3_endpoint, ready_report, settings
):
    key = f"{object_store}/reports/{ready_report.storage_name}"
    assert key in object_names(s3_endpoint)
    assert files_under(settings.MEDIA_ROOT) == []
    data = report_file(report=ready_report)
    assert hashlib.sha256(data).hexdigest() == ready_report.sha256

    # The object altered in the store: refused, as a changed file on the disk is.
    s3_client(s3_endpoint).put_object(Bucket=BUCKET, Key=key, Body=data + b"%tampered")
    with pytest.raises(ReportIntegrityError):
        report_file(report=ready_report)


@pytest.fixture
def ready_report(object_store, scored, personas, inline_tasks) -> Report:  # noqa: F811
    with inline_tasks():
        report = report_request(
            assessment=scored, language="en", member=member_of(personas.ava), channel=Channel.WEB
        )
    report.refresh_from_db()
    assert report.status == "ready", report.error
    return report


def test_an_upload_to_a_store_that_is_away_fails_clearly_and_keeps_nothing(
    scored, personas, store_down, settings
):
    assessment = draft(scored, personas)
    before, on_disk = EvidenceFile.objects.count(), files_under(settings.MEDIA_ROOT)
    with pytest.raises(StorageUnavailableError) as caught:
        upload(assessment, personas, LOG.read_bytes())
    assert caught.value.status_code == 503
    assert list(caught.value.errors) == [LOG_QUESTION]
    assert "file store cannot be reached" in caught.value.errors[LOG_QUESTION][0]
    assert EvidenceFile.objects.count() == before
    assert files_under(settings.MEDIA_ROOT) == on_disk


def test_the_upload_api_answers_503_with_the_question_code_when_the_store_is_away(
    scored, personas, store_down
):
    from accounts.services import api_token_create

    assessment = draft(scored, personas)
    _, key = api_token_create(user=personas.ava, organization=scored.organization, name="storage")
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.post(
        f"/api/v1/assessments/{assessment.pk}/evidence/",
        {"question": LOG_QUESTION, "file": SimpleUploadedFile("startup.log", LOG.read_bytes())},
    )
    assert response.status_code == 503, response.content
    assert LOG_QUESTION in response.json().get("errors", response.json())
    assert not EvidenceFile.objects.filter(assessment=assessment).exists()


def test_a_download_from_a_store_that_is_away_is_503_not_500(
    object_store, s3_endpoint, scored, personas, settings
):
    evidence = upload(draft(scored, personas), personas, LOG.read_bytes())
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {
            **settings.STORAGES["evidence"],
            "OPTIONS": {
                **settings.STORAGES["evidence"]["OPTIONS"],
                "endpoint_url": "http://127.0.0.1:9",
            },
        },
    }
    client = Client(raise_request_exception=False)
    client.force_login(personas.ava)
    response = client.get(reverse("assessments:evidence_download", args=[evidence.pk]))
    assert response.status_code == 503


def test_the_stray_file_sweep_removes_orphan_objects_and_keeps_referenced_ones(
    object_store, s3_endpoint, scored, personas
):
    from io import StringIO

    from django.core.management import call_command

    evidence = upload(draft(scored, personas), personas, LOG.read_bytes())
    kept = f"{object_store}/evidence/{evidence.storage_name}"
    orphan = f"{object_store}/evidence/{scored.organization_id}/orphan-of-a-rolled-back-row"
    s3_client(s3_endpoint).put_object(Bucket=BUCKET, Key=orphan, Body=b"left behind")

    out = StringIO()
    call_command("remove_stray_files", "--older-than", "0", stdout=out)

    names = object_names(s3_endpoint)
    assert orphan not in names, out.getvalue()
    assert kept in names
    assert "orphan-of-a-rolled-back-row" in out.getvalue()


def test_a_renewal_whose_evidence_cannot_be_copied_fails_clearly_and_keeps_nothing(
    object_store, s3_endpoint, scored, personas, settings
):
    from assessments.models import Assessment, RenewalReason
    from assessments.services.reassessment import renewal_start

    before = set(object_names(s3_endpoint))
    assessments = Assessment.objects.count()
    dead = {**settings.STORAGES["evidence"]["OPTIONS"], "endpoint_url": "http://127.0.0.1:9"}
    settings.STORAGES = {
        **settings.STORAGES,
        "evidence": {**settings.STORAGES["evidence"], "OPTIONS": dead},
    }
    with pytest.raises(StorageUnavailableError) as caught:
        renewal_start(
            assessment=scored,
            reason=RenewalReason.DUE,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    assert "file store" in caught.value.errors["evidence"][0]
    assert Assessment.objects.count() == assessments
    assert set(object_names(s3_endpoint)) == before


# Run in a process of its own: tracemalloc counts every thread of a process, and the test
# process holds others' (live servers, receivers) whose allocations are not the transfer's.
TRANSFER = """
import hashlib, json, tracemalloc
import django
django.setup()
from assessments.storage import evidence_storage
from core.storage import write_atomically
block = bytes(range(256)) * 256  # 64 KiB
storage = evidence_storage()
storage.exists("warm-up")  # the client is made outside the measurement
tracemalloc.start()
stored = write_atomically(storage, "bounded/one", (block for _ in range(768)))
upload_peak = tracemalloc.get_traced_memory()[1]
tracemalloc.reset_peak()
digest = hashlib.sha256()
with storage.open(stored.name, "rb") as handle:
    for chunk in handle.chunks():
        digest.update(chunk)
download_peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"same": digest.hexdigest() == stored.sha256, "size": stored.size,
                  "upload_peak": upload_peak, "download_peak": download_peak}))
"""


def test_a_large_transfer_holds_a_bounded_part_of_the_file_in_memory(s3_endpoint, tmp_path):
    """48 MB up and down through the store: memory holds parts of it (boto3's defaults held
    56 MB for a 50 MB upload), never the whole file."""
    environment = {
        **os.environ,
        **s3_environment(s3_endpoint, "bounded"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "MEDIA_ROOT": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-c", TRANSFER],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])

    assert figures["same"] and figures["size"] == 48 * 2**20
    assert figures["upload_peak"] < 36 * 2**20, figures
    assert figures["download_peak"] < 24 * 2**20, figures
