"""Startup-log evidence parser (CTX-08): formats of the shared spec's engine-logs.md.

Plain pytest functions, no Django. Line numbers below were read off the fixtures with `grep -n`.
"""

import gzip
import io
import json
import os
import random
import tracemalloc
from pathlib import Path

import pytest

from scoring.evidence import (
    EngineInstance,
    LogParseResult,
    parse_notes,
    parse_reason,
    parse_startup_log,
    summarize_logs,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
PREFILL = FIXTURES / "sglang-prefill-glm53-launch.log"
DECODE = FIXTURES / "sglang-decode-glm53-launch.log"
REMEDIATED = FIXTURES / "sglang-prefill-glm53-remediated.log"
CONCATENATED = FIXTURES / "sglang-disagg-concatenated.log"
COMPOSE = FIXTURES / "sglang-compose-interleaved.log"
CRLF = FIXTURES / "sglang-qwen25-single-crlf.log"
VLLM = FIXTURES / "vllm-llama70b.log"
VLLM_FAILED = FIXTURES / "vllm-llama70b-fp8-failed-start.log"
TRTLLM = FIXTURES / "trtllm-llama8b.log"
TGI = FIXTURES / "tgi-mistral7b.log"
UNRELATED = FIXTURES / "unrelated-runbook-notes.txt"
ALL_FIXTURES = sorted(p for p in FIXTURES.iterdir() if p.is_file())

SCHEDULER = (
    "[2026-08-20 10:00:30 TP0] max_total_num_tokens=105600, chunked_prefill_size=4096, "
    "max_prefill_tokens=16384, max_running_requests=2048, context_len=40960, "
    "available_gpu_mem=21.09 GB"
)


def notes_of(result: LogParseResult) -> list[str]:
    """The result's notes as an English reader sees them."""
    return parse_notes(result.to_dict(), str)


def reason_of(result: LogParseResult) -> str:
    return parse_reason(result.to_dict(), str)


def parse_text(text: str, **kwargs) -> LogParseResult:
    return parse_startup_log(io.BytesIO(text.encode("utf-8")), **kwargs)


def server_args(mode: str = "'prefill'", context: str = "1048576") -> str:
    filler = ", ".join(f"option_{n}=None" for n in range(40))
    return (
        "[2026-08-20 10:00:01] server_args=ServerArgs(model_path='/models/glm', "
        f"tokenizer_mode='auto', {filler}, context_length={context}, tp_size=8, "
        f"disaggregation_mode={mode}, disaggregation_transfer_backend='mooncake')"
    )


def assert_clean(text: str | None) -> None:
    assert text is not None
    assert "\x1b" not in text
    assert "\r" not in text
    assert "[0m" not in text
    assert len(text) <= 300


class ReadOnlyStream:
    """A non-seekable upload stream: only read()."""

    def __init__(self, data: bytes) -> None:
        self._buffer = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self._buffer.read(size)


# --- SGLang: the incident logs --------------------------------------------------------------


def test_it_reads_pool_and_context_of_the_incident_prefill_log():
    result = parse_startup_log(PREFILL)

    assert result.parsed is True
    assert result.engine == "sglang"
    assert result.pool == 681280
    assert result.context == 1048576
    assert result.pool_line == 42
    assert result.context_line == 42
    assert result.lines == [42]
    assert result.pool_text == (
        "[2026-08-27 06:15:18 TP0] max_total_num_tokens=681280, chunked_prefill_size=16384, "
        "max_prefill_tokens=16384, max_running_requests=2048, context_len=1048576, "
        "available_gpu_mem=22.73 GB"
    )
    assert_clean(result.context_text)
    [instance] = result.instances
    assert instance.role == "prefill"
    assert instance.failed_start is False


def test_it_counts_rejections_on_a_prefill_instance_and_writes_a_note():
    result = parse_startup_log(PREFILL)

    assert result.instances[0].rejections == 2
    assert (
        "Oversized prompts rejected on a prefill instance (disaggregated): 2; "
        "check that clients received errors."
    ) in notes_of(result)


def test_it_describes_the_incident_log_for_the_ui():
    assert parse_startup_log(PREFILL).describe() == (
        "SGLang log: pool 681,280 tokens, context 1,048,576 tokens, line 42"
    )


def test_it_reads_the_decode_log_with_its_role():
    result = parse_startup_log(DECODE)

    assert (result.pool, result.context, result.lines) == (1179648, 1048576, [43])
    assert result.instances[0].role == "decode"
    assert result.instances[0].rejections == 0
    assert result.notes == ()


def test_it_reads_the_remediated_prefill_pool():
    result = parse_startup_log(REMEDIATED)

    assert (result.pool, result.context, result.lines) == (2039936, 1048576, [42])
    assert result.instances[0].role == "prefill"
    assert result.pool > result.context


def test_it_reads_the_smallest_pool_of_a_concatenated_file():
    result = parse_startup_log(CONCATENATED)

    assert [i.role for i in result.instances] == ["prefill", "decode"]
    assert [i.pool_tokens for i in result.instances] == [681280, 1179648]
    assert [i.pool_line for i in result.instances] == [42, 93]
    assert [i.context_line for i in result.instances] == [42, 93]
    assert result.pool == 681280
    assert result.pool_line == 42
    assert result.context == 1048576
    assert result.describe() == (
        "SGLang log, 2 instances (prefill, decode): pool 681,280 tokens, "
        "context 1,048,576 tokens, line 42"
    )


def test_it_separates_instances_interleaved_by_docker_compose():
    result = parse_startup_log(COMPOSE)

    by_role = {i.role: i for i in result.instances}
    assert set(by_role) == {"prefill", "decode"}
    assert (by_role["prefill"].pool_tokens, by_role["prefill"].pool_line) == (681280, 57)
    assert (by_role["decode"].pool_tokens, by_role["decode"].pool_line) == (1179648, 60)
    assert result.pool == 681280
    assert_clean(by_role["decode"].pool_text)
    assert by_role["decode"].pool_text.startswith("glm53-decode-1   | [2026-08-27 06:16:03 TP0]")


def test_it_reads_an_old_sglang_log_with_windows_line_ends():
    result = parse_startup_log(CRLF)

    assert (result.pool, result.context, result.lines) == (105600, 32768, [15])
    assert result.pool_text == (
        "[2024-11-05 09:14:49 TP0] max_total_num_tokens=105600, max_prefill_tokens=16384, "
        "max_running_requests=2049, context_len=32768"
    )
    # this release has no disaggregation_mode in its server arguments
    assert result.instances[0].role is None
    assert len(result.instances) == 1


# --- SGLang: line shapes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        SCHEDULER,
        "max_total_num_tokens=105600, chunked_prefill_size=4096, max_prefill_tokens=16384, "
        "max_running_requests=2048, context_len=40960",
        "max_total_num_tokens=105600, max_prefill_tokens=16384, max_running_requests=2048, "
        "context_len=40960",
        "context_len=40960, max_running_requests=2048, max_total_num_tokens=105600",
        "max_total_num_tokens=105600, chunked_prefill_size=-1, max_prefill_tokens=16384, "
        "max_running_requests=4096, context_len=40960, available_cpu_mem=480.20 GB",
        "[2026-08-20 10:00:30 DP0 TP0 EP0] max_total_num_tokens=105600, context_len=40960",
    ],
)
def test_it_reads_every_shape_of_the_sglang_scheduler_line(line):
    result = parse_text(f"starting\n{line}\nready\n")

    assert (result.engine, result.pool, result.context, result.lines) == (
        "sglang",
        105600,
        40960,
        [2],
    )


@pytest.mark.parametrize(
    "kv_line",
    [
        "KV Cache is allocated. #tokens: 105600, K size: 7.26 GB, V size: 7.26 GB",
        "KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB",
    ],
)
def test_it_takes_the_pool_from_the_kv_allocated_line_when_the_scheduler_line_is_missing(kv_line):
    expected = int(kv_line.split("#tokens: ")[1].split(",")[0])
    text = "\n".join(
        [
            server_args("'null'", "40960"),
            f"[2026-08-20 10:00:20 TP0] {kv_line}",
            f"[2026-08-20 10:00:20 TP1] {kv_line}",
        ]
    )

    result = parse_text(text + "\n")

    assert result.pool == expected
    assert result.pool_line == 2
    assert result.context == 40960
    assert result.context_line == 1
    assert result.instances[0].role == "single"
    assert len(result.instances) == 1
    assert any("'KV Cache is allocated' (line 2)" in note for note in notes_of(result))
    assert any("configured context_length" in note for note in notes_of(result))


def test_the_scheduler_line_wins_over_the_kv_allocated_line_and_server_args():
    text = "\n".join(
        [
            server_args("'prefill'", "2000000"),
            "[2026-08-20 10:00:20 TP0] KV Cache is allocated. #tokens: 105664, KV size: 4.4 GB",
            SCHEDULER,
        ]
    )

    result = parse_text(text)

    assert (result.pool, result.pool_line, result.context, result.context_line) == (
        105600,
        3,
        40960,
        3,
    )
    assert result.notes == ()


@pytest.mark.parametrize(
    ("mode", "role"),
    [
        ("'prefill'", "prefill"),
        ("'decode'", "decode"),
        ("'null'", "single"),
        ("None", "single"),
        ('"decode"', "decode"),
    ],
)
def test_it_reads_the_role_from_the_server_arguments(mode, role):
    result = parse_text(server_args(mode) + "\n" + SCHEDULER + "\n")

    assert result.instances[0].role == role


def test_it_takes_the_configured_context_from_server_args_and_shows_the_field_in_the_text():
    text = server_args("'prefill'", "1048576")
    assert len(text) > 300

    result = parse_text(
        text + "\n[2026-08-20 10:00:20 TP0] KV Cache is allocated. "
        "#tokens: 681280, KV size: 28.51 GB\n"
    )

    assert (result.context, result.context_line) == (1048576, 1)
    assert_clean(result.context_text)
    assert "context_length=1048576" in result.context_text
    assert result.context_text.startswith("[2026-08-20 10:00:01] server_args=ServerArgs(")


def test_server_args_without_a_context_and_no_scheduler_line_leave_the_context_unknown():
    text = server_args("'decode'", "None") + "\n"
    text += "[2026-08-20 10:00:20 TP0] KV Cache is allocated. #tokens: 681280, KV size: 28.51 GB\n"

    result = parse_text(text)

    assert result.pool == 681280
    assert result.context is None
    assert any("context_length=None" in note for note in notes_of(result))


def test_it_counts_a_rejection_printed_by_every_tp_rank_once():
    message = (
        "Input length (702113 tokens) exceeds the maximum allowed length (681279 tokens). "
        "Use a shorter input or enable --allow-auto-truncate."
    )
    lines = [server_args("'prefill'"), SCHEDULER]
    lines += [f"[2026-08-27 14:02:51 TP{r}] {message}" for r in range(8)]
    lines += [f"[2026-08-27 14:05:10 TP{r}] {message}" for r in range(8)]

    result = parse_text("\n".join(lines))

    assert result.instances[0].rejections == 2
    assert (
        "Oversized prompts rejected on a prefill instance (disaggregated): 2; "
        "check that clients received errors."
    ) in notes_of(result)


def test_it_adds_up_rejections_of_different_data_parallel_groups():
    message = "Input length (90000 tokens) exceeds the maximum allowed length (40959 tokens)."
    lines = [
        server_args("'decode'"),
        SCHEDULER,
        f"[2026-08-27 14:02:51 DP0 TP0] {message}",
        f"[2026-08-27 14:02:51 DP0 TP1] {message}",
        f"[2026-08-27 14:02:52 DP1 TP2] {message}",
    ]

    result = parse_text("\n".join(lines))

    assert result.instances[0].rejections == 2
    assert any("rejected on a decode instance (disaggregated)" in n for n in notes_of(result))


def test_rejections_on_a_single_node_or_an_unknown_role_get_their_own_notes():
    message = "Input length (90000 tokens) exceeds the maximum allowed length (40959 tokens)."
    single = parse_text("\n".join([server_args("'null'"), SCHEDULER, message]))
    unknown = parse_text("\n".join([SCHEDULER, message]))

    assert single.instances[0].rejections == 1
    assert any("rejected on a single-node instance: 1" in n for n in notes_of(single))
    assert unknown.instances[0].role is None
    assert any("whose role the log does not state" in n for n in notes_of(unknown))


def test_it_does_not_split_an_instance_on_kv_lines_repeated_by_untagged_ranks():
    kv = "KV Cache is allocated. #tokens: 681280, KV size: 28.51 GB"
    result = parse_text("\n".join([kv] * 8 + ["max_total_num_tokens=681280, context_len=1048576"]))

    assert len(result.instances) == 1
    assert (result.pool, result.pool_line) == (681280, 9)


def test_it_starts_a_new_instance_when_the_pool_line_repeats_without_a_banner():
    text = "\n".join(
        [
            "[2026-08-20 10:00:01 TP0] max_total_num_tokens=681280, context_len=1048576",
            "[2026-08-20 11:00:01 TP0] KV Cache is allocated. #tokens: 2039936, KV size: 85 GB",
            "[2026-08-20 11:00:02 TP0] max_total_num_tokens=2039936, context_len=1048576",
        ]
    )

    result = parse_text(text)

    assert [i.pool_tokens for i in result.instances] == [681280, 2039936]
    assert [i.pool_line for i in result.instances] == [1, 3]
    assert result.pool == 681280


# --- vLLM -----------------------------------------------------------------------------------


def test_it_reads_a_vllm_v1_log_with_its_prefixes():
    result = parse_startup_log(VLLM)

    assert (result.engine, result.pool, result.context) == ("vllm", 2042016, 131072)
    assert (result.pool_line, result.context_line, result.lines) == (29, 30, [29, 30])
    assert result.pool_text == (
        "(EngineCore_0 pid=2398) INFO 08-20 10:03:03 [kv_cache_utils.py:849] "
        "GPU KV cache size: 2,042,016 tokens"
    )
    assert result.context_text == (
        "(EngineCore_0 pid=2398) INFO 08-20 10:03:03 [kv_cache_utils.py:853] "
        "Maximum concurrency for 131,072 tokens per request: 15.58x"
    )
    assert result.instances[0].role is None
    assert result.notes == ()
    assert result.describe() == (
        "vLLM log: pool 2,042,016 tokens, context 131,072 tokens, lines 29–30"
    )


@pytest.mark.parametrize(
    ("pool_line", "context_line"),
    [
        (
            "INFO 08-20 10:00:01 [kv_cache_utils.py:634] GPU KV cache size: 2,042,016 tokens",
            "INFO 08-20 10:00:01 [kv_cache_utils.py:635] Maximum concurrency for 131,072 "
            "tokens per request: 15.58x",
        ),
        (
            "(EngineCore_0 pid=123) INFO 08-20 10:00:01 [kv_cache_utils.py:634] "
            "GPU KV cache size: 2042016 tokens",
            "(EngineCore_0 pid=123) INFO 08-20 10:00:01 [kv_cache_utils.py:635] "
            "Maximum concurrency for 131072 tokens per request: 15.58x",
        ),
    ],
)
def test_it_reads_vllm_numbers_with_and_without_thousands_separators(pool_line, context_line):
    result = parse_text(f"{pool_line}\n{context_line}\n")

    assert (result.pool, result.context, result.lines) == (2042016, 131072, [1, 2])


def test_a_vllm_failed_start_is_parsed_as_a_failed_start_not_a_configuration():
    result = parse_startup_log(VLLM_FAILED)

    assert result.parsed is True
    assert result.failed_start is True
    assert result.pool is None
    assert result.context is None
    [instance] = result.instances
    assert instance.failed_start is True
    assert (instance.context_tokens, instance.context_line) == (131072, 33)
    assert_clean(instance.context_text)
    assert "max seq len (131072)" in instance.context_text
    assert notes_of(result) == [
        "vLLM refused to start (line 33): one request at the model's max seq len "
        "(131,072 tokens) does not fit in the KV cache (vLLM estimates 64,288 tokens would "
        "fit); this log is a failed start, not a running configuration.",
    ]
    assert result.describe() == (
        "vLLM log: failed start (max seq len 131,072 tokens did not fit the KV cache), line 33"
    )


def test_a_restart_after_a_failed_start_is_a_second_instance(tmp_path):
    combined = tmp_path / "vllm-restarts.log"
    combined.write_bytes(VLLM_FAILED.read_bytes() + VLLM.read_bytes())
    failed_lines = VLLM_FAILED.read_bytes().count(b"\n")

    result = parse_startup_log(combined)

    assert [i.failed_start for i in result.instances] == [True, False]
    assert result.pool == 2042016
    assert result.context == 131072
    assert result.lines == [failed_lines + 29, failed_lines + 30]
    assert result.failed_start is True
    assert "failed starts: 1" in result.describe()


def test_it_reads_the_older_vllm_failed_start_that_names_the_pool():
    line = (
        "ERROR 03-02 10:00:01 llm_engine.py:412] ValueError: The model's max seq len (131072) "
        "is larger than the maximum number of tokens that can be stored in KV cache (98304). "
        "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )

    result = parse_text(line)

    [instance] = result.instances
    assert instance.failed_start is True
    assert (instance.pool_tokens, instance.context_tokens) == (98304, 131072)
    assert (result.pool, result.context) == (None, None)


def test_vllm_without_a_concurrency_line_falls_back_to_the_configured_max_seq_len():
    text = "\n".join(
        [
            "INFO 08-20 10:00:01 [api_server.py:1805] vLLM API server version 0.10.1.1",
            "(EngineCore_0 pid=9) INFO 08-20 10:00:02 [core.py:73] Initializing a V1 LLM engine "
            "(v0.10.1.1) with config: model='m', max_seq_len=65536, download_dir=None",
            "(EngineCore_0 pid=9) INFO 08-20 10:00:30 [kv_cache_utils.py:849] "
            "GPU KV cache size: 200,000 tokens",
        ]
    )

    result = parse_text(text)

    assert (result.pool, result.context, result.context_line) == (200000, 65536, 2)
    assert any("configured max_model_len" in note for note in notes_of(result))


def test_vllm_kv_roles_give_prefill_and_decode():
    def log(role: str) -> str:
        return "\n".join(
            [
                "INFO 08-20 10:00:01 [api_server.py:1805] vLLM API server version 0.10.1.1",
                "INFO 08-20 10:00:01 [utils.py:326] non-default args: {'max_model_len': 32768, "
                f"'kv_transfer_config': KVTransferConfig(kv_connector='P2pNcclConnector', "
                f"kv_role='{role}', kv_rank=0)}}",
                "GPU KV cache size: 400,000 tokens",
                "Maximum concurrency for 32,768 tokens per request: 12.21x",
            ]
        )

    assert parse_text(log("kv_producer")).instances[0].role == "prefill"
    assert parse_text(log("kv_consumer")).instances[0].role == "decode"
    assert parse_text(log("kv_both")).instances[0].role is None


# --- TensorRT-LLM -----------------------------------------------------------------------------


def test_it_reads_a_tensorrt_llm_log_where_the_adjusted_max_seq_len_wins():
    result = parse_startup_log(TRTLLM)

    assert result.engine == "trtllm"
    # the memory-probing allocation (4,096 tokens) is replaced by the real one
    assert (result.pool, result.pool_line) == (53248, 21)
    assert (result.context, result.context_line) == (53248, 22)
    assert result.pool_text == (
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 3.25 GiB for max tokens in "
        "paged KV cache (53248)."
    )
    assert result.context_text.endswith("Adjusted max_seq_len to 53248")
    assert result.describe() == (
        "TensorRT-LLM log: pool 53,248 tokens, context 53,248 tokens, lines 21–22"
    )


def test_tensorrt_llm_max_num_tokens_is_not_a_context():
    text = "\n".join(
        [
            "[TensorRT-LLM] TensorRT-LLM version: 0.21.0",
            "[08/20/2026-10:00:21] [TRT-LLM] [I] max_seq_len=8224, max_num_requests=64, "
            "max_num_tokens=8192",
            "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 12.34 GiB for max tokens in "
            "paged KV cache (123456).",
        ]
    )

    result = parse_text(text)

    assert (result.pool, result.pool_line) == (123456, 3)
    assert (result.context, result.context_line) == (8224, 2)


def test_the_cpp_executor_max_sequence_len_is_a_tensorrt_llm_context():
    text = "\n".join(
        [
            "[TensorRT-LLM][INFO] TRTGptModel maxSequenceLen: 32768",
            "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 20.00 GiB for max tokens in "
            "paged KV cache (163840).",
        ]
    )

    result = parse_text(text)

    assert (result.engine, result.pool, result.context) == ("trtllm", 163840, 32768)


def test_a_max_seq_len_outside_any_engine_log_is_ignored():
    result = parse_text("training config: max_seq_len=4096, lr=3e-4\n")

    assert result.parsed is False


# --- TGI ------------------------------------------------------------------------------------


def test_it_reads_a_tgi_log_with_pretty_printed_args():
    result = parse_startup_log(TGI)

    assert result.engine == "tgi"
    assert (result.pool, result.pool_line) == (421568, 77)
    assert (result.context, result.context_line) == (32768, 22)
    assert result.context_text == "max_total_tokens: Some(32768,"
    assert result.pool_text == (
        "2026-08-20T10:00:32.018447Z  INFO text_generation_router_v3: "
        "backends/v3/src/lib.rs:137: Setting max batch total tokens to 421568"
    )
    assert result.describe() == (
        "TGI log: pool 421,568 tokens, context 32,768 tokens, lines 22 and 77"
    )


@pytest.mark.parametrize(
    "field",
    ["max_total_tokens: 8192", "max_total_tokens: Some(8192)", "max_total_tokens=8192"],
)
def test_it_reads_tgi_single_line_args_in_every_shape(field):
    text = "\n".join(
        [
            "2026-08-20T10:00:01.1Z  INFO text_generation_launcher: Args { model_id: "
            f'"bigscience/bloom-560m", revision: None, max_input_tokens: None, {field}, '
            "max_batch_total_tokens: None, port: 80 }",
            "2026-08-20T10:00:09.2Z  INFO text_generation_router: router/src/main.rs:380: "
            "Setting max batch total tokens to 123456",
        ]
    )

    result = parse_text(text)

    assert (result.pool, result.context, result.lines) == (123456, 8192, [1, 2])


def test_the_tgi_default_max_total_tokens_line_gives_the_context():
    text = "\n".join(
        [
            '2026-08-20T10:00:01Z  INFO text_generation_launcher: Args { model_id: "m", '
            "max_input_tokens: None, max_total_tokens: None, port: 80 }",
            "2026-08-20T10:00:01Z  INFO text_generation_launcher: Default `max_input_tokens` "
            "to 4095",
            "2026-08-20T10:00:01Z  INFO text_generation_launcher: Default `max_total_tokens` "
            "to 4096",
            "2026-08-20T10:00:09Z  INFO text_generation_router: Setting max batch total tokens "
            "to 98304",
        ]
    )

    result = parse_text(text)

    assert (result.context, result.context_line, result.pool) == (4096, 3, 98304)


def test_it_reads_tgi_json_output_with_escaped_newlines():
    line = (
        '{"timestamp":"2026-08-20T10:00:01.1Z","level":"INFO","fields":{"message":"Args {\\n'
        '    model_id: \\"m\\",\\n    max_total_tokens: Some(\\n        16384,\\n    ),\\n}"},'
        '"target":"text_generation_launcher"}'
    )
    pool = (
        '{"timestamp":"2026-08-20T10:00:09Z","level":"INFO","fields":{"message":"Setting max '
        'batch total tokens to 65536"},"target":"text_generation_router_v3"}'
    )

    result = parse_text(f"{line}\n{pool}\n")

    assert (result.context, result.pool) == (16384, 65536)


# --- prefixes, colours, line ends, encodings ------------------------------------------------


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "2026-08-27T06:15:18.123456789Z ",
        "2026-08-27T06:15:18.123456789Z stdout F ",
        "[pod/glm53-prefill-0/sglang] ",
        "glm53-prefill-1  | ",
        "Aug 27 06:15:18 gpu-node-17 sglang[4711]: ",
    ],
)
def test_it_tolerates_docker_kubernetes_and_syslog_prefixes(prefix):
    lines = [
        server_args("'prefill'"),
        "[2026-08-27 06:15:16 TP0] KV Cache is allocated. #tokens: 681280, KV size: 28.51 GB",
        "[2026-08-27 06:15:18 TP0] max_total_num_tokens=681280, chunked_prefill_size=16384, "
        "context_len=1048576",
    ]

    result = parse_text("".join(prefix + line + "\n" for line in lines))

    assert (result.pool, result.context, result.lines) == (681280, 1048576, [3])
    assert result.instances[0].role == "prefill"
    assert result.pool_text.startswith(prefix.rstrip())


def test_it_strips_ansi_colours_including_codes_that_lost_their_escape():
    text = (
        "\x1b[2m[2026-08-27 06:15:18 TP0]\x1b[0m \x1b[1;32mmax_total_num_tokens=681280\x1b[0m, "
        "[33mcontext_len=1048576[0m\n"
    )

    result = parse_text(text)

    assert (result.pool, result.context) == (681280, 1048576)
    assert result.pool_text == (
        "[2026-08-27 06:15:18 TP0] max_total_num_tokens=681280, context_len=1048576"
    )


def test_every_fixture_text_is_clean():
    for path in ALL_FIXTURES:
        result = parse_startup_log(path)
        for instance in result.instances:
            for text in (instance.pool_text, instance.context_text):
                if text is not None:
                    assert_clean(text)


def test_a_progress_bar_overwritten_with_carriage_returns_does_not_hide_a_key_line():
    text = (
        "Loading shards:  50%|#####     |\rLoading shards: 100%|##########|\r"
        "[2026-08-27 06:15:18 TP0] max_total_num_tokens=681280, context_len=1048576\n"
        "next line\n"
    )

    result = parse_text(text)

    assert (result.pool, result.pool_line) == (681280, 1)
    assert result.pool_text == (
        "[2026-08-27 06:15:18 TP0] max_total_num_tokens=681280, context_len=1048576"
    )


def test_it_reads_utf8_with_a_bom_and_utf16_written_by_windows_tools():
    body = "noise\n" + SCHEDULER + "\n"
    utf8 = parse_startup_log(io.BytesIO(b"\xef\xbb\xbf" + body.encode("utf-8")))
    utf16 = parse_startup_log(io.BytesIO(body.replace("\n", "\r\n").encode("utf-16")))

    for result in (utf8, utf16):
        assert (result.pool, result.context, result.lines) == (105600, 40960, [2])


def test_invalid_utf8_is_replaced_not_fatal():
    data = b"noise \xff\xfe\xc3 here\n" + SCHEDULER.encode() + b" \xe9\n"

    result = parse_startup_log(io.BytesIO(data))

    assert (result.pool, result.pool_line) == (105600, 2)


def test_line_numbers_stay_exact_after_a_line_longer_than_the_read_chunk():
    long_line = b"x" * (3 * 1024 * 1024) + b"\n"
    data = b"first\n" + long_line + SCHEDULER.encode() + b"\n"

    result = parse_startup_log(io.BytesIO(data))

    assert result.pool_line == 3


# --- gzip -----------------------------------------------------------------------------------


def test_it_reads_a_gzip_log_like_the_plain_one(tmp_path):
    compressed = tmp_path / "sglang-prefill-glm53-launch.log.gz"
    compressed.write_bytes(gzip.compress(PREFILL.read_bytes()))

    plain = parse_startup_log(PREFILL).to_dict()
    result = parse_startup_log(compressed).to_dict()

    assert result["source_name"] == "sglang-prefill-glm53-launch.log.gz"
    plain.pop("source_name")
    result.pop("source_name")
    assert result == plain


def test_it_reads_gzip_from_a_stream_that_cannot_seek():
    data = gzip.compress(VLLM.read_bytes())

    result = parse_startup_log(ReadOnlyStream(data), source_name="upload.gz")

    assert (result.source_name, result.pool, result.lines) == ("upload.gz", 2042016, [29, 30])


def test_a_corrupt_gzip_is_not_parsed():
    result = parse_startup_log(io.BytesIO(b"\x1f\x8b" + os.urandom(2000)))

    assert result.parsed is False
    assert reason_of(result).startswith("corrupt gzip")


def test_a_gzip_cut_short_after_the_key_lines_keeps_what_it_read():
    data = gzip.compress(PREFILL.read_bytes() + b"tail noise\n" * 20000)
    cut = data[: len(data) - 50]

    result = parse_startup_log(io.BytesIO(cut))

    assert (result.parsed, result.pool, result.pool_line) == (True, 681280, 42)
    assert any("Only part of the file could be read" in note for note in notes_of(result))


def test_a_gzip_bomb_stops_at_the_decompressed_limit():
    data = gzip.compress(b"A" * (5 * 1024 * 1024))

    result = parse_startup_log(io.BytesIO(data), max_bytes=1024 * 1024)

    assert result.parsed is False
    assert reason_of(result) == "too large: more than 1 MB of text once decompressed"


# --- files that are not parsed ----------------------------------------------------------------


def test_an_unrelated_text_file_is_not_parsed():
    result = parse_startup_log(UNRELATED)

    assert result.parsed is False
    assert result.engine is None
    assert reason_of(result) == (
        "no startup lines of a supported engine (SGLang, vLLM, TensorRT-LLM, TGI) were found"
    )
    assert result.describe().startswith("not parsed: no startup lines")
    assert summarize_logs([result]) is None


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty file"),
        (b"\n\n   \r\n\t\n", "empty file (blank lines only)"),
        # mtime=0: the test id is made of these bytes, and pytest-xdist wants it the same in
        # every worker (gzip otherwise writes the current time into the header)
        (gzip.compress(b"", mtime=0), "empty file (empty gzip archive)"),
        (bytes(range(256)) * 64, "binary data, not a text file"),
        (
            bytes(random.Random(7).randrange(128, 256) for _ in range(9000)),
            "binary data, not a text file",
        ),
    ],
)
def test_empty_and_binary_files_are_not_parsed(data, reason):
    result = parse_startup_log(io.BytesIO(data))

    assert (result.parsed, reason_of(result), result.instances) == (False, reason, ())


def test_a_log_of_a_known_engine_without_numbers_says_so():
    result = parse_text(server_args("'prefill'", "None") + "\nLoad weight begin.\n")

    assert result.parsed is False
    assert reason_of(result) == (
        "SGLang lines were found, but no KV pool or context line "
        "(is the startup part of the log missing?)"
    )
    assert any("logs no KV pool or context line" in note for note in notes_of(result))


def test_a_file_over_the_size_limit_is_not_parsed():
    size = PREFILL.stat().st_size

    too_big = parse_startup_log(PREFILL, max_bytes=size - 1)
    just_fits = parse_startup_log(PREFILL, max_bytes=size)

    assert too_big.parsed is False
    assert reason_of(too_big).startswith("too large")
    assert too_big.instances == ()
    assert just_fits.pool == 681280


@pytest.mark.parametrize(
    "source",
    ["/nonexistent/startup.log", Path("/"), 42, None],
)
def test_unreadable_sources_are_not_parsed(source):
    result = parse_startup_log(source)

    assert result.parsed is False
    assert result.reason


def test_no_input_ever_raises():
    rng = random.Random(20261026)
    samples: list[bytes] = [b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x08", b"\xff\xfe", b"\x00" * 10]
    for path in ALL_FIXTURES:
        data = path.read_bytes()
        packed = gzip.compress(data)
        for _ in range(15):
            samples.append(data[: rng.randrange(len(data))])
            samples.append(packed[: rng.randrange(len(packed))])
            flipped = bytearray(data)
            for _ in range(20):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            samples.append(bytes(flipped))
    samples += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5000))) for _ in range(50)]

    for data in samples:
        result = parse_startup_log(io.BytesIO(data), max_bytes=200_000)
        assert isinstance(result, LogParseResult)
        json.dumps(result.to_dict())
        assert result.describe()
        assert result.parsed or result.reason


def test_a_text_mode_stream_is_accepted():
    result = parse_startup_log(io.StringIO(SCHEDULER + "\n"))

    assert result.pool == 105600


# --- result API -------------------------------------------------------------------------------


def test_to_dict_is_json_ready_and_complete():
    data = parse_startup_log(PREFILL, source_name="prefill.log").to_dict()

    assert json.loads(json.dumps(data)) == data
    assert {
        "parsed": True,
        "engine": "sglang",
        "pool": 681280,
        "context": 1048576,
        "lines": [42],
        "reason": None,
        "source_name": "prefill.log",
    }.items() <= data.items()
    assert data["instances"][0] == {
        "engine": "sglang",
        "role": "prefill",
        "pool_tokens": 681280,
        "pool_line": 42,
        "pool_text": data["pool_text"],
        "context_tokens": 1048576,
        "context_line": 42,
        "context_text": data["context_text"],
        "failed_start": False,
        "rejections": 2,
    }
    assert isinstance(data["notes"], list)


def test_results_and_instances_are_frozen():
    result = parse_startup_log(PREFILL)

    with pytest.raises(AttributeError):
        result.parsed = False  # type: ignore[misc]
    with pytest.raises(AttributeError):
        result.instances[0].pool_tokens = 1  # type: ignore[misc]
    assert isinstance(result.instances[0], EngineInstance)


def test_the_source_name_defaults_to_the_file_name():
    assert parse_startup_log(PREFILL).source_name == PREFILL.name
    assert parse_startup_log(str(PREFILL)).source_name == PREFILL.name
    with PREFILL.open("rb") as handle:
        assert parse_startup_log(handle).source_name == PREFILL.name
    assert parse_startup_log(PREFILL, source_name="evidence-3.log").source_name == "evidence-3.log"
    assert parse_startup_log(io.BytesIO(b"")).source_name == ""


def test_a_caller_stream_is_left_open():
    with PREFILL.open("rb") as handle:
        parse_startup_log(handle)
        assert handle.closed is False


def test_two_engines_in_one_file_are_mixed(tmp_path):
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(PREFILL.read_bytes() + VLLM.read_bytes())

    result = parse_startup_log(mixed)

    assert result.engine == "mixed"
    assert [i.engine for i in result.instances] == ["sglang", "vllm"]
    assert (result.pool, result.context) == (681280, 1048576)
    assert result.describe().startswith("Mixed-engine log (SGLang, vLLM), 2 instances")


def test_a_note_says_when_pool_and_context_come_from_different_instances():
    text = "\n".join(
        [
            server_args("'prefill'"),
            "[2026-08-20 10:00:30 TP0] max_total_num_tokens=681280, context_len=131072",
            server_args("'decode'"),
            "[2026-08-20 10:00:30 TP0] max_total_num_tokens=2000000, context_len=1048576",
        ]
    )

    result = parse_text(text)

    assert (result.pool, result.context, result.lines) == (681280, 1048576, [2, 4])
    assert result.describe().endswith("lines 2 and 4")
    assert any("come from different instances" in note for note in notes_of(result))


# --- summary over several files ----------------------------------------------------------------


def test_the_summary_takes_the_smallest_pool_and_the_largest_context_over_all_files():
    results = [
        parse_startup_log(p) for p in (REMEDIATED, DECODE, PREFILL, VLLM, VLLM_FAILED, UNRELATED)
    ]

    summary = summarize_logs(results)

    assert summary is not None
    assert (summary.pool, summary.pool_source, summary.pool_line) == (681280, PREFILL.name, 42)
    assert summary.pool_text.startswith("[2026-08-27 06:15:18 TP0] max_total_num_tokens=681280")
    assert (summary.context, summary.context_source, summary.context_line) == (
        1048576,
        REMEDIATED.name,
        42,
    )
    assert summary.pool_below_context is True
    assert UNRELATED.name not in summary.sources
    assert json.loads(json.dumps(summary.to_dict()))["pool"] == 681280


def test_the_summary_of_the_remediated_deployment_has_no_mismatch():
    summary = summarize_logs([parse_startup_log(REMEDIATED), parse_startup_log(DECODE)])

    assert summary is not None
    assert (summary.pool, summary.context) == (1179648, 1048576)
    assert summary.pool_below_context is False


def test_there_is_no_summary_without_a_parsed_pool_or_context():
    assert summarize_logs([]) is None
    assert summarize_logs([parse_startup_log(UNRELATED)]) is None
    assert summarize_logs([parse_startup_log(VLLM_FAILED)]) is None


# --- streaming ------------------------------------------------------------------------------


def test_a_50_mb_log_is_streamed_with_little_memory(tmp_path):
    path = tmp_path / "sglang-50mb.log"
    head = PREFILL.read_bytes()
    head_lines = head.count(b"\n")
    noise = (
        b"[2026-08-27 07:12:44 TP0] Decode batch. #running-req: 37, #token: 412288, "
        b"token usage: 0.61, cuda graph: True, gen throughput (token/s): 1843.12, #queue-req: 0\n"
    )
    tail = DECODE.read_bytes()
    block = noise * 4096
    target = 48 * 1024 * 1024
    noise_lines = 0
    with path.open("wb") as handle:
        handle.write(head)
        written = len(head)
        while written + len(block) + len(tail) < target:
            handle.write(block)
            written += len(block)
            noise_lines += 4096
        handle.write(tail)
    assert path.stat().st_size > 45 * 1024 * 1024

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = parse_startup_log(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak - before < 8 * 1024 * 1024
    assert [i.role for i in result.instances] == ["prefill", "decode"]
    assert result.pool == 681280
    assert result.pool_line == 42
    assert result.instances[1].pool_line == head_lines + noise_lines + 43


# --- less common shapes -----------------------------------------------------------------------


def test_it_reads_the_role_when_server_args_print_an_enum():
    text = server_args("<DisaggregationMode.DECODE: 'decode'>") + "\n" + SCHEDULER

    assert parse_text(text).instances[0].role == "decode"


def test_vllm_running_out_of_memory_for_any_block_is_a_failed_start():
    line = (
        "(EngineCore_0 pid=7) ERROR 08-20 10:03:03 [core.py:718] ValueError: No available "
        "memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine."
    )

    result = parse_text(line + "\n" + line + "\n")

    [instance] = result.instances
    assert (result.parsed, instance.failed_start, instance.context_tokens) == (True, True, None)
    assert any("no GPU memory was left for the KV cache" in note for note in notes_of(result))
    assert result.describe() == ("vLLM log: failed start (no GPU memory was left for the KV cache)")


def test_old_vllm_logs_turn_blocks_into_tokens_and_note_a_concurrency_below_one():
    text = "\n".join(
        [
            "INFO 03-02 10:00:01 api_server.py:585] vLLM API server version 0.6.3",
            "INFO 03-02 10:00:40 distributed_gpu_executor.py:57] # GPU blocks: 4096, "
            "# CPU blocks: 2048",
            "INFO 03-02 10:00:40 distributed_gpu_executor.py:61] Maximum concurrency for "
            "131072 tokens per request: 0.50x",
        ]
    )

    result = parse_text(text)

    # 4,096 blocks x the default 16 tokens; the concurrency line agrees (131,072 x 0.50).
    assert (result.parsed, result.pool, result.context) == (True, 65536, 131072)
    assert result.pool_line == 2
    assert result.pool_text.endswith("# GPU blocks: 4096, # CPU blocks: 2048")
    assert any("maximum concurrency of 0.50x (line 3)" in note for note in notes_of(result))
    assert any(
        "4,096 GPU blocks, line 2) and the log states no block size: with vLLM's CUDA default"
        " of 16 tokens per block the pool is 65,536 tokens" in note
        for note in notes_of(result)
    )
    assert any("line 3) agrees" in note for note in notes_of(result))


def test_sglang_auto_truncation_is_noted():
    truncated = (
        "[2026-08-27 14:02:51 TP0] Request length is longer than the KV cache pool size or the "
        "max context length. Truncated. len(req.origin_input_ids)=702113, "
        "max_req_input_len=681279."
    )

    result = parse_text("\n".join([server_args("'null'"), SCHEDULER, truncated]))

    assert result.instances[0].rejections == 0
    assert any("(--allow-auto-truncate): 1." in note for note in notes_of(result))
