"""What the startup-log parser looks for: the patterns of each engine's lines (SGLang, vLLM,
TensorRT-LLM, TGI), the stream and rank prefixes it tolerates, and which source of a number
wins inside one instance."""

import re

# Priorities: a higher priority source wins inside one instance.
POOL_DERIVED = 0  # computed from blocks x block size (vLLM V0, TensorRT-LLM block counts)
POOL_SGLANG_KV_ALLOC = 1  # "KV Cache is allocated. #tokens: N" (fallback)
POOL_MAIN = 2  # the engine's own pool figure
CTX_ARGS = 0  # vLLM argument dump (max_model_len)
CTX_CONFIG = 1  # configured context (SGLang server_args, vLLM engine config, TRT, TGI Args)
CTX_MAIN = 2  # the context the engine runs with

_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)"

# Cheap filter run on every raw line; only lines that match are decoded and examined.
TRIGGER = re.compile(
    rb"ServerArgs\(|KV Cache is allocated|max_total_num_tokens|exceeds the maximum allowed length"
    rb"|Request length is longer|vLLM API server version|LLM engine|KV cache size"
    rb"|Maximum concurrency|max seq len|No available memory|blocks: |kv_role|max_model_len"
    rb"|TensorRT-LLM version|TensorRT LLM version|paged KV cache|bytes for k/v cache|max_seq_len"
    rb"|maxSequenceLen|max sequence length=|KV cache primary pool|tokens per block"
    rb"|Args \{|max_total_tokens|max batch total|Maximum total tokens|block_size|block size to"
)

# Patterns start with a literal (Python's re then scans fast); word boundaries before a field
# name are checked by _field() instead of a leading \b.
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
ORPHAN_SGR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")  # colour codes whose ESC was lost

# Stream prefixes that interleave several instances in one file.
STREAM_COMPOSE = re.compile(r"\s*([A-Za-z0-9][\w.-]*?[-_]\d+)\s+\|\s?")
STREAM_KUBECTL = re.compile(r"\s*\[(pod/[^\]\s/]+/[^\]\s]+)\]\s")

# Rank tags: SGLang "[2026-08-20 10:00:01 DP0 TP3]", vLLM "(VllmWorker TP0 pid=123)",
# TensorRT-LLM "[RANK 0]".
RANK_BRACKET = re.compile(r"\[[^\[\]]*?\b((?:(?:DP|TP|PP|EP|CP|ATTN_DP)\d+\s*)+)\]")
RANK_PROCESS = re.compile(r"\(([A-Za-z][\w .=-]*?)\s+pid=\d+\)")
RANK_TRT = re.compile(r"\[RANK\s*(\d+)\]")
DP_GROUP = re.compile(r"\bDP\d+|EngineCore_(?:DP)?\d+")

# SGLang
SGL_CONTEXT_LENGTH = re.compile(r"context_length=(\d+)")
SGL_DISAGG_MODE = re.compile(
    r"disaggregation_mode=(?:<[\w.]+:\s*)?(?:'([^']*)'|\"([^\"]*)\"|(\w+))"
)
# Newer releases print more fields first: "KV Cache is allocated. dtype: torch.bfloat16, #tokens: N"
SGL_KV_ALLOC = re.compile(r"KV Cache is allocated\.?[^#]{0,120}?#tokens:\s*" + _NUM)
SGL_MAX_TOTAL = re.compile(r"max_total_num_tokens=" + _NUM)
SGL_CONTEXT_LEN = re.compile(r"context_len=" + _NUM)
SGL_REJECTION = re.compile(
    r"Input length \(" + _NUM + r" tokens?\) exceeds the maximum allowed length \(" + _NUM
)

# vLLM
VLLM_ENGINE_INIT = re.compile(r"Initializing an? (?:V1 )?LLM engine\b.*?with config:")
MAX_SEQ_LEN = re.compile(r"max_seq_len=(\d+)")
VLLM_ARGS_MAX_MODEL_LEN = re.compile(r"max_model_len['\"]?\s*[:=]\s*(\d+)")
VLLM_POOL = re.compile(r"KV cache size:\s*" + _NUM + r"\s*tokens")
VLLM_CONCURRENCY = re.compile(
    r"Maximum concurrency for " + _NUM + r" tokens per request:\s*([\d.]+)\s*x"
)
VLLM_FAILED = re.compile(
    r"To serve at least one request with the models?'?s? max seq len \(" + _NUM + r"\)"
)
VLLM_ESTIMATED = re.compile(r"estimated maximum model length is " + _NUM)
VLLM_V0_FAILED = re.compile(
    r"models?'?s? max seq len \(" + _NUM + r"\) is larger than the maximum number of tokens"
    r" that can be stored in KV cache \(" + _NUM + r"\)"
)
# "# GPU blocks: N, # CPU blocks: M" (V0 and V1 before 0.7.3), "# cuda blocks: N" / "# rocm blocks: N"
# (V0 0.7-0.10 name the platform), and "GPU blocks: N" when a paste lost its "#".
VLLM_BLOCKS = re.compile(
    r"(?:#\s*)?\b(?:GPU|gpu|cuda|CUDA|rocm|ROCm|ROCM|npu|NPU|xpu|XPU|hpu|HPU|tpu|TPU|neuron)"
    r" blocks:\s*" + _NUM
)
VLLM_BLOCK_SIZE = re.compile(r"block_size['\"]?\s*[:=]\s*(\d+)")
VLLM_ATTN_BLOCK_SIZE = re.compile(r"Setting attention block size to (\d+) tokens")
VLLM_DEFAULT_BLOCK_SIZE = 16  # CUDA and ROCm default in every V0 release
VLLM_KV_ROLE = re.compile(r"kv_role['\"]?\s*[:=]\s*['\"]?(kv_producer|kv_consumer|kv_both)")

# TensorRT-LLM
TRT_BANNER = re.compile(r"TensorRT[- ]LLM version:?\s*v?\d")
TRT_POOL = re.compile(r"paged KV cache \(" + _NUM + r"\)")
# Up to 0.8: "Using N tokens in paged KV cache." (Triton backend: "Using N total tokens in ...")
TRT_POOL_OLD = re.compile(r"Using " + _NUM + r" (?:total )?tokens in paged KV cache")
TRT_PRIMARY_BLOCKS = re.compile(r"(?:KV cache primary pool:|primary blocks=)\s*" + _NUM)
TRT_TOKENS_PER_BLOCK = re.compile(r"tokens per block[:=]\s*" + _NUM)
TRT_REDUCED = re.compile(r"maxSequenceLen (?:are|is) too large.*?reduced to (\d+)")
TRT_MAX_SEQUENCE_LENGTH = re.compile(r"max sequence length=(\d+)")
TRT_ADJUSTED = re.compile(r"Adjusted max_seq_len to (\d+)")
TRT_CPP_MAX_SEQ_LEN = re.compile(r"maxSequenceLen:\s*(\d+)")
TRT_CUE = re.compile(
    r"TensorRT-LLM|\[TRT-LLM|TRTGptModel|tensorrt_llm|max_num_requests=|TensorRT LLM"
)

# TGI (its Args are printed with Rust's Debug format, single-line or pretty multi-line)
TGI_MAX_TOTAL = re.compile(r"max_total_tokens\s*[:=]\s*(?:Some\((?:\s|\\n)*)?(\d+)")
TGI_MAX_TOTAL_OPEN = re.compile(r"max_total_tokens\s*:\s*Some\(\s*$")
TGI_CONTINUATION_VALUE = re.compile(r"\s*(\d+)\s*,?\s*")
# 2.x launcher: "Default `max_total_tokens` to N"; 3.x router, when the Args left it None:
# "Maximum total tokens defaulted to N".
TGI_DEFAULT = re.compile(
    r"(?:Default `?max_total_tokens`? to|Maximum total tokens defaulted to) (\d+)"
)
TGI_POOL = re.compile(
    r"(?:Setting max batch total tokens to|Inferred max batch total tokens:) (\d+)"
)

SGLANG_ROLES = {"prefill": "prefill", "decode": "decode", "null": "single", "none": "single"}
VLLM_ROLES = {"kv_producer": "prefill", "kv_consumer": "decode"}
