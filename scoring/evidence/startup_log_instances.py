"""The startup-log parser's engine instances: what the line analysis collects for one instance,
and the instance built from it (the pool and context chosen by priority, the block-count
fallback, the notes on what was odd)."""

from dataclasses import dataclass
from typing import Any

from scoring.evidence.messages import ENGINE_LABELS, note
from scoring.evidence.startup_log_patterns import (
    CTX_CONFIG,
    CTX_MAIN,
    DP_GROUP,
    POOL_DERIVED,
    POOL_SGLANG_KV_ALLOC,
    VLLM_DEFAULT_BLOCK_SIZE,
)
from scoring.evidence.startup_log_results import EngineInstance


@dataclass
class Hit:
    value: int
    line: int
    text: str


class Builder:
    """One engine instance being assembled."""

    def __init__(self, engine: str, first_line: int) -> None:
        self.engine = engine
        self.first_line = first_line
        self.role: str | None = None
        self.role_raw: str | None = None
        self.pools: dict[tuple[int, str], Hit] = {}
        self.contexts: dict[tuple[int, str], Hit] = {}
        self.failed: Hit | None = None
        self.failed_kind = ""
        self.estimated_len: int | None = None
        self.rejections: dict[str, int] = {}
        self.truncations = 0
        self.banner_seen = False
        # vLLM before 0.7.3 reports blocks, not tokens: tokens = blocks x block size.
        self.blocks: Hit | None = None
        self.block_size: Hit | None = None
        # "Maximum concurrency for X tokens per request: Y x": (Y, line, X)
        self.concurrency: tuple[float, int, int] | None = None
        self.server_args_context_none = False
        # TensorRT-LLM: pool = primary blocks x tokens per block when no token count is printed
        self.trt_primary_blocks: Hit | None = None
        self.trt_tokens_per_block: Hit | None = None
        self.trt_reduced: Hit | None = None


def _pick(
    hits: dict[tuple[int, str], Hit], *, smallest: bool
) -> tuple[Hit | None, int | None, list[int]]:
    """Best hit at the highest priority present; also the distinct values at that priority."""
    if not hits:
        return None, None, []
    top = max(priority for priority, _ in hits)
    candidates = [hit for (priority, _), hit in hits.items() if priority == top]
    if smallest:
        best = min(candidates, key=lambda h: (h.value, h.line))
    else:
        best = min(candidates, key=lambda h: (-h.value, h.line))
    return best, top, sorted({h.value for h in candidates})


def finish(builder: Builder) -> tuple[EngineInstance | None, list[dict[str, Any]]]:
    label = ENGINE_LABELS[builder.engine]
    notes: list[dict[str, Any]] = []
    if not builder.pools:
        notes.extend(_pool_from_blocks(builder))
    pool, pool_priority, pool_values = _pick(builder.pools, smallest=True)
    context, ctx_priority, ctx_values = _pick(builder.contexts, smallest=False)
    role = builder.role
    start = builder.first_line

    # Rejections: ranks of one data-parallel group print the same request, so take the
    # largest count within a group and add the groups up.
    groups: dict[str, int] = {}
    for rank, count in builder.rejections.items():
        match = DP_GROUP.search(rank)
        group = match.group(0) if match else ""
        groups[group] = max(groups.get(group, 0), count)
    rejections = sum(groups.values())

    if builder.failed is None and pool is None and context is None and rejections == 0:
        if role:
            notes.append(note("instance_without_figures_role", engine=label, role=role, line=start))
        else:
            notes.append(note("instance_without_figures", engine=label, line=start))
        return None, notes

    if builder.failed is not None:
        line = builder.failed.line
        if builder.failed_kind == "max_seq_len" and context is not None:
            if builder.estimated_len is not None:
                notes.append(
                    note(
                        "vllm_failed_max_seq_len_estimate",
                        line=line,
                        context=context.value,
                        estimate=builder.estimated_len,
                    )
                )
            else:
                notes.append(note("vllm_failed_max_seq_len", line=line, context=context.value))
        else:
            notes.append(note("vllm_failed_no_memory", line=line))

    if len(pool_values) > 1 and pool is not None:
        notes.append(note("ranks_differ_pool", engine=label, line=start, values=pool_values))
    if len(ctx_values) > 1 and context is not None:
        notes.append(note("ranks_differ_context", engine=label, line=start, values=ctx_values))
    if builder.engine == "sglang":
        if pool is not None and pool_priority == POOL_SGLANG_KV_ALLOC:
            notes.append(note("sglang_pool_from_kv_alloc", line=start, pool_line=pool.line))
        if context is not None and ctx_priority == CTX_CONFIG:
            notes.append(
                note("sglang_context_from_server_args", line=start, context_line=context.line)
            )
        if context is None and builder.server_args_context_none:
            notes.append(note("sglang_context_unknown", line=start))
    if builder.engine == "vllm" and builder.failed is None:
        if context is not None and ctx_priority is not None and ctx_priority < CTX_MAIN:
            notes.append(
                note("vllm_context_from_max_model_len", line=start, context_line=context.line)
            )
        if builder.concurrency is not None and builder.concurrency[0] < 1.0:
            notes.append(
                note(
                    "vllm_concurrency_below_one",
                    concurrency=builder.concurrency[0],
                    concurrency_line=builder.concurrency[1],
                )
            )
    if builder.engine == "trtllm" and builder.trt_reduced is not None and context is not None:
        if context.line == builder.trt_reduced.line:
            notes.append(
                note("trtllm_context_reduced", context=context.value, context_line=context.line)
            )
    if builder.engine == "tgi" and context is None and pool is not None:
        notes.append(note("tgi_context_unknown", line=start))
    if builder.truncations:
        notes.append(note("truncations", engine=label, line=start, count=builder.truncations))
    if rejections:
        if role in ("prefill", "decode"):
            notes.append(note("rejections_disaggregated", role=role, count=rejections))
        elif role == "single":
            notes.append(note("rejections_single_node", count=rejections))
        else:
            notes.append(note("rejections_role_unknown", engine=label, count=rejections))
    if builder.role_raw is not None and role is None and builder.role_raw != "kv_both":
        notes.append(
            note("unknown_disaggregation_mode", mode=builder.role_raw, engine=label, line=start)
        )

    instance = EngineInstance(
        engine=builder.engine,
        role=role,
        pool_tokens=pool.value if pool else None,
        pool_line=pool.line if pool else None,
        pool_text=pool.text if pool else None,
        context_tokens=context.value if context else None,
        context_line=context.line if context else None,
        context_text=context.text if context else None,
        failed_start=builder.failed is not None,
        rejections=rejections,
    )
    return instance, notes


def _pool_from_blocks(builder: Builder) -> list[dict[str, Any]]:
    """Turn a block count into the pool (tokens) when the engine printed no token count.

    vLLM: blocks x the block size the log states, else the CUDA default 16, cross-checked with
    "Maximum concurrency for X tokens per request: Y x" (the engine computes Y as blocks x block
    size / X, so X x Y is the pool to within Y's two decimals). TensorRT-LLM: primary blocks x
    tokens per block. Returns the notes saying which figures were used.
    """
    if builder.engine == "trtllm":
        primary, per_block = builder.trt_primary_blocks, builder.trt_tokens_per_block
        if primary is None or per_block is None:
            return []
        tokens = primary.value * per_block.value
        builder.pools[(POOL_DERIVED, "")] = Hit(tokens, primary.line, primary.text)
        return [
            note(
                "trtllm_pool_from_blocks",
                line=builder.first_line,
                blocks=primary.value,
                tokens_per_block=per_block.value,
                blocks_line=primary.line,
                tokens_per_block_line=per_block.line,
            )
        ]
    if builder.engine != "vllm" or builder.blocks is None or builder.failed is not None:
        return []
    blocks = builder.blocks.value
    notes: list[dict[str, Any]] = []
    concurrency = builder.concurrency
    product = round(concurrency[2] * concurrency[0]) if concurrency else None
    # Y is printed with two decimals: X x Y can be off by X x 0.005 (plus a block of rounding).
    tolerance = concurrency[2] * 0.005 + 1 if concurrency else 0
    cross_check = (
        {
            "context": concurrency[2],
            "concurrency": concurrency[0],
            "concurrency_line": concurrency[1],
            "product": product,
        }
        if concurrency and product is not None
        else None
    )
    if builder.block_size is not None:
        block_size = builder.block_size.value
        tokens = blocks * block_size
        notes.append(
            note(
                "vllm_blocks_stated_block_size",
                blocks=blocks,
                blocks_line=builder.blocks.line,
                block_size=block_size,
                block_size_line=builder.block_size.line,
                tokens=tokens,
            )
        )
    else:
        block_size = VLLM_DEFAULT_BLOCK_SIZE
        tokens = blocks * block_size
        implied = _implied_block_size(blocks, product, tolerance) if product else None
        if implied is not None and implied != block_size:
            block_size, tokens = implied, blocks * implied
            assert cross_check is not None
            notes.append(
                note(
                    "vllm_blocks_concurrency_block_size",
                    blocks=blocks,
                    blocks_line=builder.blocks.line,
                    block_size=block_size,
                    tokens=tokens,
                    **cross_check,
                )
            )
            cross_check = None  # said already
        else:
            notes.append(
                note(
                    "vllm_blocks_default_block_size",
                    blocks=blocks,
                    blocks_line=builder.blocks.line,
                    tokens=tokens,
                )
            )
    if cross_check is not None and product is not None:
        agrees = abs(tokens - product) <= tolerance
        key = "vllm_blocks_concurrency_agrees" if agrees else "vllm_blocks_concurrency_disagrees"
        extra = {} if agrees else {"blocks": blocks, "block_size": block_size}
        notes.append(note(key, **cross_check, **extra))
    builder.pools[(POOL_DERIVED, "")] = Hit(tokens, builder.blocks.line, builder.blocks.text)
    return notes


def _implied_block_size(blocks: int, product: int, tolerance: float) -> int | None:
    """The power-of-two block size (1 to 1,024 tokens) that makes blocks x size match X x Y."""
    for size in (16, 32, 64, 128, 256, 512, 1024, 8, 4, 2, 1):
        if abs(blocks * size - product) <= tolerance:
            return size
    return None
