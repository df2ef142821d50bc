"""The assessor's KV sizing page: paste or upload a config.json, choose the data type, tokens and
GPUs, and read the figures with the formula worked out in them (in either language)."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

pytestmark = pytest.mark.django_db

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "model_configs"
URL = "/tools/kv-sizing/"


@pytest.fixture
def member(client, personas):
    client.force_login(personas.vic)  # a viewer: the calculator changes nothing
    return client


def test_the_page_is_in_the_navigation_and_asks_for_a_config(member):
    page = member.get(URL).content.decode()

    assert reverse("scoring:kvsize") == URL
    assert f'<a href="{URL}" aria-current="page">KV sizing</a>' in page
    assert 'name="config_text"' in page and 'type="file"' in page


def test_an_anonymous_visitor_is_sent_to_sign_in(client):
    assert client.get(URL).status_code == 302


def test_a_pasted_deepseek_config_in_fp8_with_the_formula_worked_out(member):
    text = (CONFIGS / "deepseek-v3.config.json").read_text(encoding="utf-8")

    page = member.post(
        URL, {"config_text": text, "dtype": "fp8", "tokens": "524288"}
    ).content.decode()

    assert "35,136 bytes" in page
    assert "(512 + 64) × 61 × 1 = 35,136" in page
    assert "524,288 × 35,136 ÷ 1,073,741,824 = 17.16" in page


def test_an_uploaded_llama_config_that_cannot_fit_says_no(member):
    upload = SimpleUploadedFile(
        "config.json", (CONFIGS / "llama-3-70b-architecture.config.json").read_bytes()
    )

    page = member.post(
        URL,
        {
            "config_file": upload,
            "dtype": "bf16",
            "tokens": "1048576",
            "gpus": "2",
            "gpu_memory_gib": "80",
        },
    ).content.decode()

    assert "2 × 80 × 8 × 128 × 2 = 327,680" in page
    assert "1,048,576 × 327,680 ÷ 1,073,741,824 = 320.00" in page
    assert "2 × 80 = 160" in page
    assert "No: the KV cache needs more than all of the instance" in page


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"config_text": "", "dtype": "bf16"}, "Paste a config.json or upload one."),
        ({"config_text": "{oops", "dtype": "bf16"}, "not a JSON file"),
        (
            {"config_text": '{"model_type": "llama"}', "dtype": "bf16"},
            "num_hidden_layers is missing",
        ),
        (
            {
                "config_text": '{"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8}',
                "dtype": "bf16",
                "gpus": "2",
            },
            "Give both the number of GPUs and the memory per GPU",
        ),
    ],
)
def test_bad_input_is_a_clear_error_next_to_its_field(member, data, message):
    response = member.post(URL, data)

    page = response.content.decode()
    assert response.status_code == 200
    assert message in page
    assert "Worked formula" not in page


def test_the_page_speaks_traditional_chinese(member):
    member.cookies["django_language"] = "zh-hant"
    text = (CONFIGS / "qwen3-4b.config.json").read_text(encoding="utf-8")

    page = member.post(URL, {"config_text": text, "dtype": "bf16"}).content.decode()

    assert "KV 快取容量核算" in page
    assert "分組查詢注意力（GQA）" in page
    assert "147,456" in page
