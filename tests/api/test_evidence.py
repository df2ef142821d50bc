import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import EvidenceFile
from tests.api.conftest import LOGS

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def url(assessment):
    return f"/api/v1/assessments/{assessment.pk}/evidence/"


def log_upload(name="sglang-prefill-glm53-launch.log"):
    return SimpleUploadedFile(name, (LOGS / name).read_bytes(), content_type="text/plain")


def test_an_engine_log_is_stored_and_parsed(personas, assessment, client_as, settings):
    response = client_as(personas.ava).post(
        url(assessment), {"question": "CTX-08", "file": log_upload()}, format="multipart"
    )

    assert response.status_code == 201
    body = response.json()
    evidence = EvidenceFile.objects.get()
    assert body["id"] == evidence.pk
    assert (body["question"], body["name"], body["parsed"]) == (
        "CTX-08", "sglang-prefill-glm53-launch.log", True,
    )  # fmt: skip
    assert body["size"] == (LOGS / "sglang-prefill-glm53-launch.log").stat().st_size
    assert body["parse_result"]["engine"] == "sglang"
    assert body["parse_result"]["pool"] == 681280
    assert (settings.MEDIA_ROOT / "evidence" / evidence.storage_name).exists()


def test_the_evidence_appears_in_the_detail(personas, assessment, client_as):
    client = client_as(personas.ava)
    client.post(url(assessment), {"question": "CTX-08", "file": log_upload()}, format="multipart")

    [evidence] = client.get(f"/api/v1/assessments/{assessment.pk}/").json()["evidence"]
    assert (evidence["question"], evidence["parsed"]) == ("CTX-08", True)
    assert evidence["parse_result"]["context"] == 1048576


def test_a_file_the_parser_cannot_read_is_kept_unparsed(personas, assessment, client_as):
    upload = SimpleUploadedFile("notes.txt", b"just some notes, no engine here\n")

    response = client_as(personas.ava).post(
        url(assessment), {"question": "CTX-08", "file": upload}, format="multipart"
    )

    assert response.status_code == 201
    assert response.json()["parsed"] is False


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"question": "CTX-08"}, {"file"}),
        ({"file": "FILE"}, {"question"}),
        ({}, {"question", "file"}),
        ({"question": "CTX-08", "file": "not a file"}, {"file"}),
        ({"question": "PRF-01", "file": "FILE"}, {"PRF-01"}),
        ({"question": "NOPE-1", "file": "FILE"}, {"NOPE-1"}),
        ({"question": "CTX-08", "file": "EMPTY"}, {"file"}),
        ({"question": "CTX-08", "file": "EXE"}, {"CTX-08"}),
    ],
)
def test_bad_uploads_are_a_400_per_field_and_store_nothing(
    personas, assessment, client_as, settings, body, fields
):
    files = {
        "FILE": lambda: log_upload(),
        "EMPTY": lambda: SimpleUploadedFile("empty.log", b""),
        "EXE": lambda: SimpleUploadedFile("tool.exe", b"MZ\x90\x00" + b"\x00" * 100),
    }
    body = {k: files[v]() if v in files else v for k, v in body.items()}

    response = client_as(personas.ava).post(url(assessment), body, format="multipart")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == fields
    assert not EvidenceFile.objects.exists()
    evidence_dir = settings.MEDIA_ROOT / "evidence"
    assert not evidence_dir.exists() or not any(evidence_dir.rglob("*.*"))


def test_json_is_not_an_upload(personas, assessment, client_as):
    response = client_as(personas.ava).post(
        url(assessment), {"question": "CTX-08", "file": "abc"}, format="json"
    )
    assert response.status_code == 415


def test_evidence_cannot_be_added_once_submitted(personas, scored, client_as):
    response = client_as(personas.ava).post(
        url(scored), {"question": "CTX-08", "file": log_upload()}, format="multipart"
    )
    assert response.status_code == 409  # the status forbids it, not the input
    assert "status" in response.json()["errors"]
    assert not EvidenceFile.objects.exists()


def test_a_viewer_may_not_upload(personas, assessment, client_as):
    response = client_as(personas.vic).post(
        url(assessment), {"question": "CTX-08", "file": log_upload()}, format="multipart"
    )
    assert response.status_code == 403
    assert not EvidenceFile.objects.exists()
