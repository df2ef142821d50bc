"""Bad input across the site (found by an input audit: NUL characters PostgreSQL cannot store,
digits int() refuses, numbers too long or too large, times UTC cannot hold, command-line
arguments): each request is answered with a clear refusal (or ignored where the input is only a
filter), never a 500, and saves nothing. PostgreSQL-only cases: make test's PostgreSQL pass."""

from __future__ import annotations

import base64
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from accounts.models import Organization
from assessments import factories
from assessments.models import AnswerDraft, AuditEvent, EvidenceFile
from probes.models import ProbeSetup
from tests.api.conftest import LOGS
from tests.personas import member_of
from tests.probes.test_portal import form_data, probe_page

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SUPERSCRIPT_TWO = "\u00b2"  # str.isdigit() says yes, int() says no


def member_client(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


# -- digits that are not ASCII digits -------------------------------------------------------


def test_a_run_id_of_non_ascii_digits_shows_the_latest_run(world, personas):
    url = reverse("assessments:findings", args=[world.scored.pk])
    response = member_client(personas.ava).get(url, {"run": SUPERSCRIPT_TWO})
    assert response.status_code == 200


def test_compare_ignores_ids_of_non_ascii_digits(world, personas):
    response = member_client(personas.ava).get(
        reverse("assessments:compare"),
        {"assessments": [SUPERSCRIPT_TWO, str(world.scored.pk), str(world.remediated.pk)]},
    )
    assert response.status_code < 500


def test_removing_evidence_of_a_non_ascii_digit_id_is_a_404(world):
    before = EvidenceFile.objects.count(), AuditEvent.objects.count()
    response = Client(raise_request_exception=False).post(
        reverse("portal:section", args=[world.token, "CTX"]), {"remove": SUPERSCRIPT_TWO}
    )
    assert response.status_code == 404
    assert (EvidenceFile.objects.count(), AuditEvent.objects.count()) == before


# -- JSON numbers longer than Python converts (4,300 digits) ----------------------------------

HUGE_NUMBER_CONFIG = '{"num_hidden_layers": %s, "num_attention_heads": 8, "hidden_size": 4096}' % (
    "9" * 5000
)


def test_a_config_with_a_5000_digit_number_is_refused_on_the_kv_sizing_page(catalog, personas):
    client = member_client(personas.ava)
    pasted = client.post(reverse("scoring:kvsize"), {"config_text": HUGE_NUMBER_CONFIG})
    assert pasted.status_code == 200
    assert "config_text" in pasted.context["form"].errors
    uploaded = client.post(
        reverse("scoring:kvsize"),
        {"config_file": io.BytesIO(HUGE_NUMBER_CONFIG.encode()), "dtype": "bf16"},
    )
    assert uploaded.status_code == 200
    assert "config_file" in uploaded.context["form"].errors


def test_a_config_with_a_5000_digit_number_is_kept_as_not_parsed_evidence(catalog, personas):
    assessment = factories.incident_assessment(
        member=member_of(personas.ava), answers_from=factories.LAUNCH_V2, submit=False
    )
    client = member_client(personas.ava)
    upload = io.BytesIO(HUGE_NUMBER_CONFIG.encode())
    upload.name = "config.json"
    response = client.post(
        f"/api/v1/assessments/{assessment.pk}/evidence/", {"question": "PRF-10", "file": upload}
    )
    assert response.status_code == 201, response.content
    kept = EvidenceFile.objects.get(assessment=assessment, question_code="PRF-10")
    assert kept.parsed is False


def run_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_kvsize_refuses_a_5000_digit_number_without_a_traceback(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(HUGE_NUMBER_CONFIG)
    done = run_command("kvsize", str(config))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def test_score_refuses_an_answer_file_with_a_5000_digit_number_without_a_traceback(tmp_path):
    answers = tmp_path / "answers.json"
    text = (ROOT / "examples" / "incident-2026-launch.json").read_text()
    answers.write_text(text.replace('"CTX-01": 1048576', '"CTX-01": ' + "9" * 5000, 1))
    assert "9" * 5000 in answers.read_text()
    done = run_command("score", str(answers))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


# -- answers and a config.json every check accepts, that scoring cannot compute ---------------

LLAMA_70B = ROOT / "tests/fixtures/model_configs/llama-3-70b-architecture.config.json"
NINETEEN_DIGIT_LAYERS = (
    b'{"num_hidden_layers": 9999999999999999999, "num_attention_heads": 8, "hidden_size": 4096}'
)


@pytest.mark.parametrize(
    ("answers", "config"),
    [
        # each within the 10¹² every integer question may reach
        ({"PRF-12": 10**12, "PRF-13": 10**12}, LLAMA_70B.read_bytes()),
        # the KV sizing page's own bounds (100,000 GPUs of 100,000 GiB)
        ({"PRF-12": 100_000, "PRF-13": 100_000}, LLAMA_70B.read_bytes()),
        # a config.json read as parsed, whose KV values per token exceed 64 bits
        ({"PRF-12": 80, "PRF-13": 8}, NINETEEN_DIGIT_LAYERS),
    ],
    ids=["gpu-answers-10e12", "gpu-answers-100000", "config-19-digit-layers"],
)
def test_what_is_accepted_can_be_scored(catalog, personas, answers, config):
    """Either the answers (or the file) are refused naming the question, or the assessment is
    scored: the sizing rules multiply them in CEL's 64-bit integers, and an overflow ("Arithmetic
    overflow in 'mul'") failed every scoring run of the assessment. Now the sizing questions
    and the model file's KV values per token are bounded (questionnaires.validation,
    scoring.evidence.kv_sizing)."""
    assessment = factories.incident_assessment(
        member=member_of(personas.ava),
        answers_from=factories.LAUNCH_V2,
        evidence=factories.logs(factories.LAUNCH_LOG),
        submit=False,
    )
    client = member_client(personas.ava)
    upload = io.BytesIO(config)
    upload.name = "config.json"
    response = client.post(
        f"/api/v1/assessments/{assessment.pk}/evidence/", {"question": "PRF-10", "file": upload}
    )
    assert response.status_code == 201, response.content
    if not response.json()["parsed"]:
        return  # refused as evidence: nothing for scoring to overflow on
    response = client.patch(
        f"/api/v1/assessments/{assessment.pk}/answers/",
        {"answers": {"PRF-11": "bf16", "KV-06": "no", **answers}},
        content_type="application/json",
    )
    if response.status_code == 400:
        assert set(response.json()["errors"]) & {"PRF-12", "PRF-13"}
        return
    assert response.status_code == 200, response.content
    scored = factories.submit_and_score(assessment, actor=personas.ava, channel="web")
    assert scored.status == "scored"


# -- NUL characters: PostgreSQL stores no NUL in text or JSON (a DataError, a 500) ------------
# The drafts' test fails on SQLite too (the NUL is stored); the searches and the cursor only
# fail on PostgreSQL: DATABASE_URL=postgres://… pytest tests/security/test_bad_input_everywhere.py


@pytest.mark.parametrize(
    "typed",
    [{"PRF-02": "Pool\x00tokens"}, {"comment-PRF-02": "see\x00here"}],
    ids=["answer", "comment"],
)
@pytest.mark.parametrize("how", ["save", "autosave", "navigate"])
def test_a_nul_typed_in_the_portal_is_refused_and_kept_without_it(world, typed, how):
    client = Client(raise_request_exception=False)
    if how == "autosave":
        url = reverse("portal:autosave", args=[world.token, "PRF"])
        response = client.post(url, typed, HTTP_HX_REQUEST="true")
        assert response.status_code < 500
    else:
        url = reverse("portal:section", args=[world.token, "PRF"])
        data = {**typed, "go": "landing"} if how == "navigate" else typed
        response = client.post(url, data)
        assert response.status_code == (302 if how == "navigate" else 400)
        if how == "save":
            assert "PRF-02" in response.content.decode()
    draft = AnswerDraft.objects.get(assessment=world.draft, question_code="PRF-02")
    kept = f"{draft.value}{draft.comment}"
    assert "\x00" not in kept
    assert "tokens" in kept or "here" in kept  # the rest of what was typed is kept


def test_a_nul_in_a_vendor_search_is_not_a_500(world, personas):
    client = member_client(personas.ava)
    assert client.get(reverse("assessments:vendor_list"), {"q": "Cloud\x00"}).status_code == 200
    assert client.get(reverse("assessments:compare"), {"q": "Cloud\x00"}).status_code == 200


def test_a_cursor_holding_a_nul_is_not_a_500(world, personas):
    cursor = base64.b64encode(b"p=Cloud\x00").decode()
    response = member_client(personas.ava).get("/api/v1/vendors/", {"cursor": cursor})
    assert response.status_code in (200, 404), response.content


def test_a_nul_in_the_chosen_questionnaire_is_not_a_500(world, personas):
    before = world.draft.__class__.objects.count()
    response = member_client(personas.ava).post(
        reverse("assessments:create"),
        {
            "vendor": str(world.draft.vendor_id),
            "questionnaire": "ai-inference-isolation@1\x00",
            "rendered_for": "ai-inference-isolation@1\x00",
        },
    )
    assert response.status_code in (200, 400)
    assert world.draft.__class__.objects.count() == before


@pytest.mark.parametrize("compressed", [False, True], ids=["text", "gzip"])
def test_a_startup_log_with_nul_bytes_is_kept_without_them(catalog, personas, compressed):
    """NUL bytes past the first 8 KiB (the type sniffing's sample), or inside a gzip: the file
    is kept and parsed; the lines its result quotes hold no NUL (which PostgreSQL refuses)."""
    assessment = factories.incident_assessment(member=member_of(personas.ava), submit=False)
    lines = (LOGS / factories.LAUNCH_LOG).read_bytes().split(b"\n")
    content = b"x" * 9000 + b"\n" + b"\n".join(line + b"\x00" for line in lines)
    upload = io.BytesIO(gzip.compress(content) if compressed else content)
    upload.name = "startup.log"
    response = member_client(personas.ava).post(
        f"/api/v1/assessments/{assessment.pk}/evidence/", {"question": "CTX-08", "file": upload}
    )
    assert response.status_code == 201, response.content[:300]
    kept = EvidenceFile.objects.get(pk=response.json()["id"])
    assert "\\u0000" not in json.dumps(kept.parse_result)


# -- the probe's authorised window ------------------------------------------------------------


@pytest.mark.parametrize(
    ("time_zone", "starts", "ends", "field"),
    [
        ("America/New_York", "2026-12-01T00:00", "9999-12-31T23:59", "window_ends_at"),
        ("Asia/Hong_Kong", "0001-01-01T00:00", "2030-01-01T00:00", "window_starts_at"),
    ],
)
def test_a_window_beyond_what_utc_can_hold_is_refused_naming_the_field(
    consented, keys, time_zone, starts, ends, field
):
    assessment, token = consented
    assessment.organization.time_zone = time_zone
    assessment.organization.save(update_fields=["time_zone"])
    response = Client(raise_request_exception=False).post(
        probe_page(token), form_data(keys, window_starts_at=starts, window_ends_at=ends)
    )
    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert not ProbeSetup.objects.exists()


# -- command line ------------------------------------------------------------------------------


def test_remove_stray_files_refuses_a_negative_age(tmp_path):
    """A negative age puts the cut-off in the future: the files of uploads in progress would
    be deleted."""
    done = run_command("remove_stray_files", "--older-than", "-5", "--dry-run")
    assert done.returncode == 2, done.stdout
    assert "--older-than" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "name",
    ["x" * 500, "Evil\u202eOrg", "Org\x07"],
    ids=["too-long", "direction-override", "control-character"],
)
def test_create_organization_refuses_a_bad_name_clearly(db, name):
    """A name over 200 characters ended in a ValidationError traceback; a direction override or
    a control character, which every form and the API refuse in a name, was accepted."""
    with pytest.raises(CommandError):
        call_command(
            "create_organization", name, owner="owner@bad-name.example", stdout=io.StringIO()
        )
    assert not Organization.objects.exists()
