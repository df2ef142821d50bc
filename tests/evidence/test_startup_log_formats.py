"""Formats older and newer engine releases print (checked against the engines' public source):
vLLM block counts, TGI 3.x defaults, TensorRT-LLM up to 0.8 and its block counts.

The real logs of tests/fixtures/logs/real/ cover the common shapes; these pin the edge cases.
"""

import io

from scoring.evidence import LogParseResult, parse_notes, parse_startup_log


def parse_text(text: str) -> LogParseResult:
    return parse_startup_log(io.BytesIO(text.encode("utf-8")))


def english_notes(result: LogParseResult) -> list[str]:
    return parse_notes(result.to_dict(), str)


# --- vLLM: blocks to tokens ------------------------------------------------------------------


def test_the_block_size_stated_in_the_engine_arguments_turns_blocks_into_tokens():
    result = parse_text(
        "INFO 05-01 10:00:00 api_server.py:177] vLLM API server version 0.5.4\n"
        "INFO 05-01 10:00:00 api_server.py:178] args: Namespace(host=None, port=8000, "
        "max_model_len=8192, block_size=32, swap_space=4)\n"
        "INFO 05-01 10:00:30 gpu_executor.py:102] # GPU blocks: 1000, # CPU blocks: 512\n"
    )

    assert (result.pool, result.pool_line, result.context) == (32000, 3, 8192)
    assert any(
        "with the block size the log states (32 tokens, line 2) the pool is 32,000 tokens" in n
        for n in english_notes(result)
    )


def test_without_a_stated_block_size_the_concurrency_line_shows_which_one_was_used():
    # Gaudi (HPU) runs 128-token blocks: 500 x 128 = 64,000 = 4,096 x 15.62 (to two decimals).
    result = parse_text(
        "INFO 05-01 10:00:30 hpu_executor.py:80] # HPU blocks: 500, # CPU blocks: 64\n"
        "INFO 05-01 10:00:30 hpu_executor.py:84] Maximum concurrency for 4096 tokens per "
        "request: 15.62x\n"
    )

    assert (result.pool, result.context) == (64000, 4096)
    assert any(
        "shows 128 tokens per block, so the pool is 64,000 tokens" in n
        for n in english_notes(result)
    )


def test_a_concurrency_line_that_contradicts_the_stated_block_size_is_noted():
    result = parse_text(
        "INFO vLLM API server version 0.6.0\n"
        "INFO args: Namespace(max_model_len=4096, block_size=16)\n"
        "INFO # GPU blocks: 1000, # CPU blocks: 512\n"
        "INFO Maximum concurrency for 4096 tokens per request: 7.81x\n"
    )

    # The stated block size wins (16 000 tokens); 4,096 x 7.81 is about 32,000: a note says so.
    assert result.pool == 16000
    assert any("does not match 1,000 blocks of 16 tokens" in n for n in english_notes(result))


def test_rocm_and_pasted_block_lines_are_read_and_cpu_blocks_are_not_the_pool():
    rocm = parse_text("INFO 02-01 executor_base.py:110] # rocm blocks: 2000, # CPU blocks: 4096\n")
    pasted = parse_text("GPU blocks: 1952, # CPU blocks: 2048\n")
    cpu_only = parse_text("INFO cpu_executor.py:80] # CPU blocks: 4096\n")

    assert (rocm.engine, rocm.pool) == ("vllm", 32000)
    assert (pasted.engine, pasted.pool) == ("vllm", 31232)
    assert cpu_only.parsed is False


def test_pool_and_concurrency_on_one_line_both_count():
    result = parse_text(
        "(EngineCore pid=1) INFO [kv_cache_utils.py:1869] GPU KV cache size: 174,643 tokens, "
        "Maximum concurrency for 131,072 tokens per request: 1.33x\n"
    )

    assert (result.pool, result.context, result.lines) == (174643, 131072, [1])


# --- TGI -------------------------------------------------------------------------------------


def test_tgi_3_takes_the_context_the_router_defaulted_when_the_args_say_none():
    result = parse_text(
        'INFO text_generation_launcher: Args { model_id: "m", max_total_tokens: None, '
        "max_input_tokens: None }\n"
        "INFO text_generation_router_v3: backends/v3/src/lib.rs:137: Setting max batch total "
        "tokens to 52125\n"
        "INFO text_generation_router: backends/v3/src/main.rs:165: Maximum input tokens "
        "defaulted to 7999\n"
        "INFO text_generation_router: backends/v3/src/main.rs:171: Maximum total tokens "
        "defaulted to 8000\n"
    )

    assert (result.engine, result.pool, result.context, result.context_line) == (
        "tgi",
        52125,
        8000,
        4,
    )


def test_tgi_inferred_max_batch_total_tokens_is_the_same_pool_not_a_second_instance():
    result = parse_text(
        'INFO text_generation_launcher: Args { model_id: "m", max_total_tokens: 4096 }\n'
        "WARN text_generation_router: `--max-batch-total-tokens` is deprecated for Flash "
        "Attention models.\n"
        "WARN text_generation_router: Inferred max batch total tokens: 90000\n"
        "INFO text_generation_router: Setting max batch total tokens to 90000\n"
    )

    assert (result.pool, result.context, len(result.instances)) == (90000, 4096, 1)


# --- TensorRT-LLM ----------------------------------------------------------------------------


def test_tensorrt_llm_08_is_recognised_by_its_kv_allocation_lines():
    result = parse_text(
        "[TensorRT-LLM][INFO] Allocate 7952400384 bytes for k/v cache.\n"
        "[TensorRT-LLM][INFO] Using 60672 tokens in paged KV cache.\n"
        "[TensorRT-LLM] TensorRT-LLM version: 0.8.0\n"
    )

    assert (result.engine, result.pool, result.pool_line) == ("trtllm", 60672, 2)
    assert len(result.instances) == 1  # the banner printed after the pool names that instance
    assert english_notes(result) == []


def test_tensorrt_llm_allocation_without_the_token_line_says_the_startup_is_cut():
    result = parse_text("[TensorRT-LLM][INFO] Allocate 7952400384 bytes for k/v cache.\n")

    assert result.parsed is False
    assert result.engine is None
    assert "TensorRT-LLM lines were found" in parse_notes({"notes": [result.reason]}, str)[0]


def test_tensorrt_llm_block_counts_give_the_pool_when_no_token_count_is_printed():
    result = parse_text(
        "[TensorRT-LLM][INFO] TRTGptModel maxSequenceLen: 4096\n"
        "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 82\n"
        "[TensorRT-LLM][INFO] Number of tokens per block: 64.\n"
    )

    assert (result.pool, result.pool_line, result.context) == (5248, 2, 4096)
    assert any("82 primary blocks x 64 tokens per block" in n for n in english_notes(result))


def test_tensorrt_llm_lowering_its_sequence_length_sets_the_context_and_says_why():
    result = parse_text(
        "[TensorRT-LLM][INFO] TRTGptModel maxSequenceLen: 131072\n"
        "[TensorRT-LLM][WARNING] maxAttentionWindow and maxSequenceLen are too large for at "
        "least one sequence to fit in kvCache. they are reduced to 5185\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 1.28 GiB for max tokens in paged KV "
        "cache (5248).\n"
    )

    assert (result.pool, result.context, result.context_line) == (5248, 5185, 2)
    assert any("lowered its maximum sequence length to 5,185" in n for n in english_notes(result))


def test_tensorrt_llm_1x_banner_and_block_summary_line():
    result = parse_text(
        "[TensorRT-LLM] TensorRT LLM version: 1.2.0rc5\n"
        "[TensorRT-LLM][INFO] Max KV cache blocks per sequence: 256 [window size=16384], tokens "
        "per block=64, primary blocks=61848, secondary blocks=0, max sequence length=16384\n"
        "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 0.00 GiB for max tokens in paged KV "
        "cache (3958272).\n"
    )

    assert (result.engine, result.pool, result.context) == ("trtllm", 3958272, 16384)
    assert len(result.instances) == 1
