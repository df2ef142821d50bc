"""`manage.py kvsize` prints v2.md's JSON; a file it cannot read exits 2 with a clear message."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

CONFIGS = Path(__file__).resolve().parent.parent / "fixtures" / "model_configs"


def kvsize(*args: str) -> dict:
    out = io.StringIO()
    call_command("kvsize", *args, stdout=out)
    return json.loads(out.getvalue())


def test_llama_70b_in_bf16():
    assert kvsize(str(CONFIGS / "llama-3-70b-architecture.config.json")) == {
        "attention": "gqa",
        "layers": 80,
        "kv_heads": 8,
        "head_dim": 128,
        "bytes_per_value": 2,
        "bytes_per_token": 327680,
    }


def test_deepseek_v3_in_fp8_with_a_pool_on_eight_gpus():
    report = kvsize(
        str(CONFIGS / "deepseek-v3.config.json"),
        "--dtype",
        "fp8",
        "--tokens",
        "524288",
        "--gpus",
        "8",
        "--gpu-memory-gib",
        "80",
    )

    assert report == {
        "attention": "mla",
        "layers": 61,
        "kv_heads": 1,
        "head_dim": 576,
        "bytes_per_value": 1,
        "bytes_per_token": 35136,
        "tokens": 524288,
        "kv_gib": 17.156,
        "gpu_memory_gib": 640,
        "fits": True,
    }


def test_a_context_that_cannot_fit_says_so():
    report = kvsize(
        str(CONFIGS / "llama-3-70b-architecture.config.json"),
        "--tokens",
        "1048576",
        "--gpus",
        "2",
        "--gpu-memory-gib",
        "80",
    )

    assert (report["kv_gib"], report["gpu_memory_gib"], report["fits"]) == (320.0, 160, False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "could not be read"),
        ("{oops", "not a JSON file"),
        ('{"model_type": "llama"}', "num_hidden_layers is missing"),
    ],
)
def test_a_file_it_cannot_read_exits_2_with_a_clear_message(tmp_path, content, message):
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")

    with pytest.raises(CommandError) as caught:
        call_command("kvsize", str(path), stdout=io.StringIO())

    assert caught.value.returncode == 2
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("memory", ["inf", "Infinity", "1e400", "1e308"])  # 1e308 × 8 GPUs: inf
def test_an_infinite_gpu_memory_is_refused_not_printed_as_invalid_json(memory):
    """v2.md: kvsize "prints one JSON object"; `Infinity` is not JSON (RFC 8259), so a memory
    that is not a finite number of GiB is an argument error like a negative one."""
    with pytest.raises(CommandError) as caught:
        call_command(
            "kvsize",
            str(CONFIGS / "llama-3-70b-architecture.config.json"),
            "--tokens",
            "5",
            "--gpus",
            "8",
            "--gpu-memory-gib",
            memory,
            stdout=io.StringIO(),
        )

    assert "--gpu-memory-gib" in str(caught.value)
