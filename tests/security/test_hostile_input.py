"""Hostile input through the REST API: every request is answered without a 5xx, rejections are
400 `{"errors": {field: [...]}}` naming the field, nothing is saved by a rejected request, and
what was saved before stays readable and unchanged."""

import gzip
import io
import json
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.translation import gettext

from assessments.models import Answer, Channel, EvidenceFile, Vendor
from assessments.services.reviews import risk_decision_record
from core.errors import ServiceError
from scoring.evidence import parse_reason
from tests.api.conftest import LOGS
from tests.personas import member_of

pytestmark = pytest.mark.django_db

LOG = LOGS / "sglang-prefill-glm53-launch.log"
HOSTILE_TEXT = {
    "a lone surrogate": "pool \ud800 tokens",
    "NUL": "pool\x00tokens",
    "a C1 control": "pool\x85tokens",
    "an escape-free C0 control": "pool\x07tokens",
    "a right-to-left override": "approved \u202etxt.exe",
    "a directional isolate": "pool \u2066tokens\u2069",
}


def send_json(client, method, url, payload):
    """The body as a hostile client writes it: JSON escapes (lone surrogates included)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return client.generic(method, url, data=body, content_type="application/json")


def answers_url(assessment):
    return f"/api/v1/assessments/{assessment.pk}/answers/"


def detail(client, assessment):
    response = client.get(f"/api/v1/assessments/{assessment.pk}/")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def ava(personas, client_as):
    return client_as(personas.ava)


@pytest.mark.parametrize("what", HOSTILE_TEXT)
@pytest.mark.parametrize("where", ["answers", "comments"])
def test_unreadable_text_is_refused_naming_the_code(ava, answered, what, where):
    before = detail(ava, answered)
    response = send_json(
        ava, "PATCH", answers_url(answered), {where: {"PRF-02": HOSTILE_TEXT[what]}}
    )
    assert response.status_code == 400, response.content
    assert list(response.json()["errors"]) == ["PRF-02"]
    assert detail(ava, answered) == before


def test_a_rejected_request_saves_none_of_its_good_answers(ava, answered):
    before = detail(ava, answered)
    response = send_json(
        ava,
        "PATCH",
        answers_url(answered),
        {"answers": {"PRF-01": "A fine answer", "PRF-02": "bad\x00"}},
    )
    assert response.status_code == 400
    assert detail(ava, answered) == before


def test_text_that_is_fine_is_kept_as_typed(ava, answered):
    text = "Pool 681,280 詞元 — naïve café, tab\there, new\nline, emoji 🙂, Arabic مرحبا"
    response = send_json(ava, "PATCH", answers_url(answered), {"answers": {"PRF-02": text}})
    assert response.status_code == 200, response.content
    assert Answer.objects.get(assessment=answered, question_code="PRF-02").value == text
    assert detail(ava, answered)["answers"]["PRF-02"] == text


def test_a_ten_megabyte_string_is_refused(ava, answered):
    before = detail(ava, answered)
    response = send_json(
        ava, "PATCH", answers_url(answered), {"answers": {"PRF-02": "x" * 10_000_000}}
    )
    assert response.status_code == 413  # "the body is over the size limits", as documented
    assert "body" in response.json()["errors"]
    assert detail(ava, answered) == before


def test_a_string_over_the_field_limit_is_refused(ava, answered):
    response = send_json(ava, "PATCH", answers_url(answered), {"comments": {"PRF-02": "x" * 5000}})
    assert response.status_code == 400
    assert "limit is 4000" in response.json()["errors"]["PRF-02"][0]


def test_deep_nesting_is_refused(ava, answered):
    for depth in (40, 5000, 100_000):
        body = b'{"answers": {"PRF-02": ' + b"[" * depth + b"]" * depth + b"}}"
        response = send_json(ava, "PATCH", answers_url(answered), body)
        assert response.status_code == 400, depth
        assert "nested" in response.json()["errors"]["body"][0]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"answers": ["PRF-02", "x"]}, "answers"),
        ({"answers": {"PRF-02": 12}}, "PRF-02"),
        ({"answers": {"CTX-01": {"value": 5}}}, "CTX-01"),
        ({"answers": {"CTX-01": "9" * 100_000}}, "CTX-01"),
        ({"answers": {"PRF-06": "\ud800"}}, "PRF-06"),
        ({"comments": {"PRF-02": ["a"]}}, "PRF-02"),
        ({"answers": {"\ud800": "x"}}, "answers"),
        ({"answers": {"X" * 100_000: "x"}}, "answers"),
        ({"\ud800": 1}, None),
    ],
)
def test_wrong_types_are_a_400_naming_the_field(ava, answered, payload, field):
    before = detail(ava, answered)
    response = send_json(ava, "PATCH", answers_url(answered), payload)
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    if field is not None:
        assert field in errors
    assert detail(ava, answered) == before


def test_a_flood_of_unknown_codes_is_refused_at_once(ava, answered):
    """Refused on the count of codes before any is looked at: one short message (not one per
    code), nothing read from the catalogue per code. (Not timed here: tests are not benchmarks.)"""
    payload = {"answers": {f"Z{index}": "" for index in range(300_000)}}  # 3.6 MB
    with CaptureQueriesContext(connection) as queries:
        response = send_json(ava, "PATCH", answers_url(answered), payload)
    assert response.status_code == 400
    assert len(response.content) < 1000
    assert "300000 codes given" in response.json()["errors"]["answers"][0]
    assert len(queries) < 20


def test_hostile_vendor_fields_are_refused(personas, client_as):
    client = client_as(personas.ava)
    response = send_json(client, "POST", "/api/v1/vendors/", {"name": "Evil\u202eAI"})
    assert response.status_code == 400
    assert "name" in response.json()["errors"]
    assert not Vendor.objects.exists()


def test_a_hostile_review_message_is_refused(personas, scored, client_as):
    response = send_json(
        client_as(personas.rex),
        "POST",
        f"/api/v1/assessments/{scored.pk}/review/",
        {"decision": "approved_with_conditions", "conditions": "ok\x00"},
    )
    assert response.status_code == 400
    assert "conditions" in response.json()["errors"]


def test_a_hostile_risk_decision_is_refused(personas, scored):
    rule = scored.latest_run.findings.first().rule_id
    with pytest.raises(ServiceError) as refused:
        risk_decision_record(
            assessment=scored,
            rule_id=rule,
            kind="acceptance",
            justification="fine \u202e",
            owner="CISO\x1b",
            expires_on=None,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    assert {"justification", "owner"} <= set(refused.value.errors)


# -- uploads -----------------------------------------------------------------------------------


def upload(client, assessment, name, content):
    """A multipart upload written by hand, so the file name reaches the server as given."""
    boundary = "hostile-boundary-7f3a"
    quoted = json.dumps(name, ensure_ascii=False)
    body = (
        (
            f"--{boundary}\r\n"
            'Content-Disposition: form-data; name="question"\r\n\r\nCTX-08\r\n'
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename={quoted}\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return client.generic(
        "POST",
        f"/api/v1/assessments/{assessment.pk}/evidence/",
        data=body,
        content_type=f"multipart/form-data; boundary={boundary}",
    )


def stored_files(settings):
    root = settings.MEDIA_ROOT / "evidence"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_a_gzip_bomb_is_kept_but_not_unpacked_beyond_the_limit(ava, assessment, settings):
    settings.EVIDENCE_MAX_BYTES = 5 * 1024 * 1024
    buffer = io.BytesIO()
    line = b"INFO scheduler idle, nothing to report\n"
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as bomb:
        for _ in range(64):  # 64 MB of log text in a few hundred kB
            bomb.write(line * (1_048_576 // len(line)))
    assert len(buffer.getvalue()) < 1_048_576
    response = upload(ava, assessment, "startup.log.gz", buffer.getvalue())
    assert response.status_code == 201, response.content
    assert response.json()["parsed"] is False
    reason = parse_reason(response.json()["parse_result"], gettext)
    assert "too large" in reason and "5 MB" in reason


def test_a_sixty_megabyte_upload_is_refused_and_leaves_nothing(ava, assessment, settings):
    response = upload(ava, assessment, "huge.log", b"x" * (60 * 1024 * 1024))
    assert response.status_code == 400
    assert "CTX-08" in response.json()["errors"]
    assert not EvidenceFile.objects.exists()
    assert stored_files(settings) == []


@pytest.mark.parametrize(
    ("name", "encode", "parsed"),
    [
        ("utf16-bom.log", lambda text: text.encode("utf-16"), True),
        ("utf16-le.log", lambda text: text.encode("utf-16-le"), True),
        ("utf32.log", lambda text: text.encode("utf-32"), False),
        ("latin1.log", lambda text: ("Ingénieur café\n" + text).encode("latin-1", "replace"), True),
    ],
)
def test_non_utf8_logs_are_kept(ava, assessment, name, encode, parsed):
    response = upload(ava, assessment, name, encode(LOG.read_text(encoding="utf-8")))
    assert response.status_code == 201, response.content
    assert response.json()["parsed"] is parsed
    assert EvidenceFile.objects.get().parsed is parsed


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("../../../etc/passwd", "passwd"),
        ("..\\..\\windows\\system32\\evil.log", "evil.log"),
        ("...", "evidence"),
        ("log\u202egol.txt", "loggol.txt"),
    ],
)
def test_path_tricks_in_file_names_are_stored_safely(ava, assessment, settings, name, shown):
    response = upload(ava, assessment, name, LOG.read_bytes())
    assert response.status_code == 201, response.content
    evidence = EvidenceFile.objects.get()
    assert evidence.original_name == shown
    [path] = stored_files(settings)
    assert path.resolve().is_relative_to((settings.MEDIA_ROOT / "evidence").resolve())
    assert ".." not in evidence.storage_name


def test_a_file_named_dot_dot_is_refused_as_missing(ava, assessment, settings):
    # Django's upload parser drops a file whose name is nothing but a path step.
    response = upload(ava, assessment, "..", LOG.read_bytes())
    assert response.status_code == 400
    assert "file" in response.json()["errors"]
    assert stored_files(settings) == []


def test_a_full_disk_saves_nothing_and_leaves_no_file(ava, assessment, settings, monkeypatch):
    import errno
    import os

    from core import storage

    def disk_full(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(storage.os, "fsync", disk_full)
    response = upload(ava, assessment, "startup.log", LOG.read_bytes())
    assert response.status_code == 507
    assert "disk may be full" in response.json()["errors"]["CTX-08"][0]
    assert not EvidenceFile.objects.exists()
    assert stored_files(settings) == []


def test_a_failure_after_storing_removes_the_file(ava, assessment, settings, monkeypatch):
    from assessments.services import evidence as evidence_services

    def broken(**kwargs):
        raise RuntimeError("the audit trail is unavailable")

    monkeypatch.setattr(evidence_services, "audit_record", broken)
    with pytest.raises(RuntimeError):
        upload(ava, assessment, "startup.log", LOG.read_bytes())
    assert not EvidenceFile.objects.exists()
    assert stored_files(settings) == []


def test_stray_files_are_removed_and_kept_ones_stay(ava, assessment, settings):
    from django.core.management import call_command

    assert upload(ava, assessment, "startup.log", LOG.read_bytes()).status_code == 201
    [kept] = stored_files(settings)
    partial = kept.parent / "0123456789abcdef.part"
    orphan = kept.parent / "fedcba9876543210"
    for stray in (partial, orphan):
        stray.write_bytes(b"left behind")
        os_time = time.time() - 2 * 3600
        import os

        os.utime(stray, (os_time, os_time))
    out = io.StringIO()
    call_command("remove_stray_files", stdout=out)
    assert "2 stray file(s)" in out.getvalue()
    assert stored_files(settings) == [kept]


def test_an_upload_body_beyond_the_request_bound_is_a_413_before_it_is_read(
    ava, assessment, settings
):
    settings.REQUEST_MAX_BYTES = 100_000
    response = upload(ava, assessment, "huge.log", b"x" * 200_000)
    assert response.status_code == 413
    assert "nothing was saved" in response.json()["errors"]["body"][0]
    assert not EvidenceFile.objects.exists()
    assert stored_files(settings) == []
