"""Evidence of questionnaire v2: the model's config.json (PRF-10) is parsed on upload by the
parser its question names; a file that is not a usable config.json is kept, marked not parsed.
(Which ruleset scores which version: tests/scoring/test_one_choice_of_ruleset.py.)"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import Channel, EvidenceFile
from assessments.services.answers import assessment_create
from tests.conftest import ROOT

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]

CONFIGS = ROOT / "tests" / "fixtures" / "model_configs"


@pytest.fixture
def assessment_v2(catalog, personas, vendor):
    return assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@2",
        actor=personas.ava,
        channel=Channel.WEB,
    )


def upload(client, assessment, code, name, data: bytes):
    return client.post(
        f"/api/v1/assessments/{assessment.pk}/evidence/",
        {"question": code, "file": SimpleUploadedFile(name, data)},
        format="multipart",
    )


def test_a_model_config_is_sized_on_upload(personas, assessment_v2, client_as):
    data = (CONFIGS / "deepseek-v3.config.json").read_bytes()

    response = upload(client_as(personas.ava), assessment_v2, "PRF-10", "config.json", data)

    assert response.status_code == 201
    result = response.json()["parse_result"]
    assert (result["kind"], result["parsed"]) == ("model_config", True)
    assert result["sizing"] == {
        "attention": "mla", "layers": 61, "kv_heads": 1, "head_dim": 576,
        "values_per_token": 35136, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"layers: 80\n", "not_json"),
        (json.dumps({"model_type": "llama"}).encode(), "not_a_model_config"),
    ],
)
def test_a_config_that_cannot_be_read_is_kept_and_marked_not_parsed(
    personas, assessment_v2, client_as, data, reason
):
    response = upload(client_as(personas.ava), assessment_v2, "PRF-10", "config.json", data)

    assert response.status_code == 201
    evidence = EvidenceFile.objects.get()
    assert (evidence.parsed, evidence.parse_result["reason"]["id"]) == (False, reason)


def test_a_startup_log_question_still_reads_logs_in_v2(personas, assessment_v2, client_as):
    data = (ROOT / "tests" / "fixtures" / "logs" / "sglang-prefill-glm53-launch.log").read_bytes()

    response = upload(client_as(personas.ava), assessment_v2, "CTX-08", "prefill.log", data)

    assert response.json()["parse_result"]["pool"] == 681280
