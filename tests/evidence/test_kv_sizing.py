"""KV sizing from a model's config.json (v2.md "KV sizing"; engine-logs.md "Sizing check").

The two headline figures come from real config.json files (tests/fixtures/model_configs/,
sources in SOURCES.md); the edge cases use small configs written here.
"""

import io
import json
from pathlib import Path

import pytest

from scoring.evidence import (
    BYTES_PER_VALUE,
    kv_gib,
    kv_sizing_from_config,
    parse_evidence,
    parse_model_config,
    parse_reason,
    sizing_report,
    stored_parse_result,
)
from scoring.evidence.kv_sizing import ModelConfigError

CONFIGS = Path(__file__).resolve().parent.parent / "fixtures" / "model_configs"


def sizing_of(name: str):
    result = parse_model_config(CONFIGS / name)
    assert result.parsed, result.reason
    return result.sizing


def test_llama_70b_is_327680_bytes_per_token_in_bf16_and_40_gib_at_131072_tokens():
    sizing = sizing_of("llama-3-70b-architecture.config.json")

    assert (sizing.attention, sizing.layers, sizing.kv_heads, sizing.head_dim) == (
        "gqa",
        80,
        8,
        128,
    )
    assert sizing.bytes_per_token(BYTES_PER_VALUE["bf16"]) == 327_680
    assert kv_gib(131_072, 327_680) == 40.0


def test_deepseek_v3_is_35136_bytes_per_token_in_fp8_and_70272_in_bf16():
    sizing = sizing_of("deepseek-v3.config.json")

    assert (sizing.attention, sizing.layers, sizing.head_dim) == ("mla", 61, 512 + 64)
    assert sizing.bytes_per_token(BYTES_PER_VALUE["fp8"]) == 35_136
    assert sizing.bytes_per_token(BYTES_PER_VALUE["bf16"]) == 70_272
    # SGLang's "#tokens: 524288, KV size: 17.16 GB" (GB = 2^30 bytes) is FP8.
    assert round(kv_gib(524_288, 35_136), 2) == 17.16


def test_an_explicit_head_dim_wins_over_hidden_size_divided_by_heads():
    sizing = sizing_of("qwen3-4b.config.json")  # hidden 2560 / 32 heads = 80, head_dim says 128

    assert (sizing.head_dim, sizing.bytes_per_token(2)) == (128, 2 * 36 * 8 * 128 * 2)


def test_mha_without_num_key_value_heads_defaults_to_the_attention_heads():
    sizing, notes = kv_sizing_from_config(
        {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}
    )

    assert (sizing.attention, sizing.kv_heads, sizing.head_dim) == ("mha", 32, 128)
    assert sizing.bytes_per_token(2) == 2 * 32 * 32 * 128 * 2
    assert [n["id"] for n in notes] == [
        "model_config_defaulted_kv_heads",
        "model_config_defaulted_head_dim",
    ]


def test_a_nested_text_config_is_used():
    config = {
        "architectures": ["Gemma3ForConditionalGeneration"],
        "vision_config": {"num_hidden_layers": 27, "hidden_size": 1152},
        "text_config": {
            "num_hidden_layers": 62,
            "num_attention_heads": 32,
            "num_key_value_heads": 16,
            "head_dim": 128,
            "hidden_size": 5376,
        },
    }

    sizing, notes = kv_sizing_from_config(config)

    assert (sizing.layers, sizing.kv_heads, sizing.head_dim) == (62, 16, 128)
    assert notes[0]["id"] == "model_config_nested_text_config"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({}, "num_hidden_layers"),
        (
            {"num_hidden_layers": 0, "num_attention_heads": 8, "hidden_size": 512},
            "num_hidden_layers",
        ),
        ({"num_hidden_layers": 2, "hidden_size": 512}, "num_attention_heads"),
        ({"num_hidden_layers": 2, "num_attention_heads": 8}, "hidden_size"),
        ({"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 512}, "head_dim"),
        ({"num_hidden_layers": 2, "kv_lora_rank": 512}, "qk_rope_head_dim"),
        (
            {"num_hidden_layers": True, "num_attention_heads": 8, "hidden_size": 512},
            "num_hidden_layers",
        ),
    ],
)
def test_a_config_without_the_fields_names_the_first_one_missing(config, field):
    with pytest.raises(ModelConfigError) as caught:
        kv_sizing_from_config(config)

    assert caught.value.reason == {"id": "not_a_model_config", "params": {"field": field}}


def test_the_report_has_exactly_the_fields_of_the_contract():
    sizing = sizing_of("llama-3-70b-architecture.config.json")

    plain = sizing_report(sizing, bytes_per_value=2)
    asked = sizing_report(sizing, bytes_per_value=2, tokens=1_048_576, gpus=2, gpu_memory_gib=80)

    assert set(plain) == {
        "attention",
        "layers",
        "kv_heads",
        "head_dim",
        "bytes_per_value",
        "bytes_per_token",
    }
    assert asked["kv_gib"] == 320.0
    assert (asked["gpu_memory_gib"], asked["fits"]) == (160, False)


@pytest.mark.parametrize(
    ("data", "reason_id"),
    [
        (b"", "empty_file"),
        (b"{not json", "not_json"),
        (b"[1, 2]", "not_a_model_config"),
        (json.dumps({"model_type": "llama"}).encode(), "not_a_model_config"),
        (b"\xff\xfe\x00binary", "not_json"),
    ],
)
def test_an_unusable_file_is_kept_as_not_parsed_with_a_reason(data, reason_id):
    result = parse_evidence(io.BytesIO(data), parser="model_config", source_name="config.json")

    assert result.parsed is False
    assert result.to_dict()["reason"]["id"] == reason_id
    assert parse_reason(result.to_dict(), str)


def test_a_stored_result_comes_back_with_its_kind():
    result = parse_evidence(
        CONFIGS / "deepseek-v3.config.json", parser="model_config", source_name="config.json"
    )

    again = stored_parse_result(json.loads(json.dumps(result.to_dict())))

    assert again == result
    assert again.to_dict()["kind"] == "model_config"
