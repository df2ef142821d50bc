"""The startup-log parser's line analysis: each line cleaned of colour codes and prefixes, matched
against the engines' patterns, its numbers kept with their line per engine instance."""

import re
from collections.abc import Iterator
from typing import Any

from core.text import storable
from scoring.evidence.messages import ENGINE_LABELS, note
from scoring.evidence.startup_log_instances import Builder, Hit, finish
from scoring.evidence.startup_log_patterns import (
    ANSI,
    CTX_ARGS,
    CTX_CONFIG,
    CTX_MAIN,
    MAX_SEQ_LEN,
    ORPHAN_SGR,
    POOL_MAIN,
    POOL_SGLANG_KV_ALLOC,
    RANK_BRACKET,
    RANK_PROCESS,
    RANK_TRT,
    SGL_CONTEXT_LEN,
    SGL_CONTEXT_LENGTH,
    SGL_DISAGG_MODE,
    SGL_KV_ALLOC,
    SGL_MAX_TOTAL,
    SGL_REJECTION,
    SGLANG_ROLES,
    STREAM_COMPOSE,
    STREAM_KUBECTL,
    TGI_CONTINUATION_VALUE,
    TGI_DEFAULT,
    TGI_MAX_TOTAL,
    TGI_MAX_TOTAL_OPEN,
    TGI_POOL,
    TRIGGER,
    TRT_ADJUSTED,
    TRT_BANNER,
    TRT_CPP_MAX_SEQ_LEN,
    TRT_CUE,
    TRT_MAX_SEQUENCE_LENGTH,
    TRT_POOL,
    TRT_POOL_OLD,
    TRT_PRIMARY_BLOCKS,
    TRT_REDUCED,
    TRT_TOKENS_PER_BLOCK,
    VLLM_ARGS_MAX_MODEL_LEN,
    VLLM_ATTN_BLOCK_SIZE,
    VLLM_BLOCK_SIZE,
    VLLM_BLOCKS,
    VLLM_CONCURRENCY,
    VLLM_ENGINE_INIT,
    VLLM_ESTIMATED,
    VLLM_FAILED,
    VLLM_KV_ROLE,
    VLLM_POOL,
    VLLM_ROLES,
    VLLM_V0_FAILED,
)
from scoring.evidence.startup_log_results import EngineInstance, LogParseResult, dedupe, not_parsed

TEXT_LIMIT = 300


def _field(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """First match of ``pattern`` that does not continue a longer name (``xcontext_len=``)."""
    for match in pattern.finditer(text):
        start = match.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_."):
            return match
    return None


def _parse_int(text: str) -> int:
    return int(text.replace(",", ""))


def _clean(text: str) -> str:
    text = text.rstrip("\r\n")
    # The lines quoted in a parse result are stored as JSON, which PostgreSQL refuses with a
    # NUL in it (the upload was a 500).
    text = storable(text)
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "m" in text and "[" in text:
        text = ORPHAN_SGR.sub("", text).replace("^[", "")
    return text


def _excerpt(text: str, start: int, end: int) -> str:
    """The line text, cut to TEXT_LIMIT characters around the match."""
    text = text.rstrip()
    if len(text) <= TEXT_LIMIT:
        return text
    if end <= TEXT_LIMIT - 1:
        return text[: TEXT_LIMIT - 1] + "…"
    head = text[:100].rstrip() + " … "
    window_start = max(100, start - 80)
    room = TEXT_LIMIT - len(head)
    window = text[window_start : window_start + room]
    if window_start + room < len(text):
        window = window[:-1] + "…"
    return head + window


def _rank_key(text: str) -> str:
    parts: list[str] = []
    match = RANK_BRACKET.search(text)
    if match:
        parts.append(" ".join(match.group(1).split()))
    match = RANK_PROCESS.search(text)
    if match and not match.group(1).startswith("APIServer"):
        parts.append(" ".join(match.group(1).split()))
    match = RANK_TRT.search(text)
    if match:
        parts.append(f"RANK{match.group(1)}")
    return " ".join(parts)


class Parser:
    def __init__(self) -> None:
        self.streams: dict[str, Builder] = {}
        self.finished: list[Builder] = []
        self.pending_tgi: dict[str, tuple[int, str]] = {}
        self.engines_seen: set[str] = set()
        self.saw_text = False
        self.last_line = 0

    # -- reading ----------------------------------------------------------------------------
    def feed(self, lines: Iterator[bytes]) -> None:
        trigger = TRIGGER.search
        line_no = 1
        for raw in lines:
            current = line_no
            if raw.endswith(b"\n"):
                line_no += 1
            self.last_line = current
            if not self.saw_text and raw.strip():
                self.saw_text = True
            if self.pending_tgi:
                self._continue_tgi(current, raw)
            if trigger(raw) is None:
                continue
            text = _clean(raw.decode("utf-8", "replace"))
            for segment in text.split("\r") if "\r" in text else (text,):
                if segment.strip():
                    self._line(current, segment)

    def _stream_of(self, text: str) -> str:
        match = STREAM_COMPOSE.match(text) or STREAM_KUBECTL.match(text)
        return match.group(1) if match else ""

    def _continue_tgi(self, line_no: int, raw: bytes) -> None:
        text = _clean(raw.decode("utf-8", "replace"))
        stream = self._stream_of(text)
        for key, (opened_at, _) in list(self.pending_tgi.items()):
            if line_no - opened_at > 200:  # the value never came: stop looking
                del self.pending_tgi[key]
        if stream not in self.pending_tgi or not text.strip():
            return
        first_line, first_text = self.pending_tgi.pop(stream)
        prefix = STREAM_COMPOSE.match(text) or STREAM_KUBECTL.match(text)
        body = text[prefix.end() :] if prefix else text
        match = TGI_CONTINUATION_VALUE.fullmatch(body)
        builder = self.streams.get(stream)
        if match and builder is not None and builder.engine == "tgi":
            joined = f"{first_text.strip()}{body.strip()}"
            hit = Hit(_parse_int(match.group(1)), first_line, _excerpt(joined, 0, 0))
            builder.contexts[(CTX_CONFIG, "")] = hit

    # -- builders ---------------------------------------------------------------------------
    def _builder(self, stream: str, engine: str, line_no: int, *, new: bool = False) -> Builder:
        self.engines_seen.add(engine)
        current = self.streams.get(stream)
        if current is not None and not new and current.engine == engine:
            return current
        if current is not None:
            self.finished.append(current)
        fresh = Builder(engine, line_no)
        self.streams[stream] = fresh
        return fresh

    def _add_pool(
        self, stream: str, engine: str, priority: int, rank: str, hit: Hit, *, last_wins: bool
    ) -> None:
        builder = self._builder(stream, engine, hit.line)
        key = (priority, rank)
        if not last_wins:
            higher = any(p > priority for p, _ in builder.pools)
            existing = builder.pools.get(key)
            duplicate = (
                existing is not None and rank == "" and existing.value == hit.value and not higher
            )
            if duplicate:
                return  # the same figure printed again by an untagged rank
            if existing is not None or higher:
                builder = self._builder(stream, engine, hit.line, new=True)
        builder.pools[key] = hit

    def _add_context(self, stream: str, engine: str, priority: int, rank: str, hit: Hit) -> None:
        builder = self._builder(stream, engine, hit.line)
        builder.contexts[(priority, rank)] = hit

    # -- one meaningful line ----------------------------------------------------------------
    def _line(self, line_no: int, text: str) -> None:
        stream = self._stream_of(text)
        if self._sglang(stream, line_no, text):
            return
        if self._vllm(stream, line_no, text):
            return
        if self._trtllm(stream, line_no, text):
            return
        self._tgi(stream, line_no, text)

    def _sglang(self, stream: str, line_no: int, text: str) -> bool:
        if "ServerArgs(" in text:
            builder = self._builder(stream, "sglang", line_no, new=True)
            mode = SGL_DISAGG_MODE.search(text)
            if mode:
                raw = next(g for g in mode.groups() if g is not None)
                builder.role_raw = raw
                builder.role = SGLANG_ROLES.get(raw.lower())
            ctx = _field(SGL_CONTEXT_LENGTH, text)
            if ctx:
                hit = Hit(_parse_int(ctx.group(1)), line_no, _excerpt(text, *ctx.span()))
                builder.contexts[(CTX_CONFIG, "")] = hit
            elif "context_length=None" in text:
                builder.server_args_context_none = True
            return True
        kv = SGL_KV_ALLOC.search(text) if "KV Cache is allocated" in text else None
        total = _field(SGL_MAX_TOTAL, text) if "max_total_num_tokens=" in text else None
        if kv or total:
            rank = _rank_key(text)
            if kv:
                hit = Hit(_parse_int(kv.group(1)), line_no, _excerpt(text, *kv.span()))
                self._add_pool(stream, "sglang", POOL_SGLANG_KV_ALLOC, rank, hit, last_wins=False)
            if total:
                hit = Hit(_parse_int(total.group(1)), line_no, _excerpt(text, *total.span()))
                self._add_pool(stream, "sglang", POOL_MAIN, rank, hit, last_wins=False)
                ctx = _field(SGL_CONTEXT_LEN, text)
                if ctx:
                    hit = Hit(_parse_int(ctx.group(1)), line_no, _excerpt(text, *ctx.span()))
                    self._add_context(stream, "sglang", CTX_MAIN, rank, hit)
            return True
        if "exceeds the maximum allowed length" in text and SGL_REJECTION.search(text):
            builder = self._builder(stream, "sglang", line_no)
            rank = _rank_key(text)
            builder.rejections[rank] = builder.rejections.get(rank, 0) + 1
            return True
        if "Request length is longer than the KV cache pool size" in text:
            self._builder(stream, "sglang", line_no).truncations += 1
            return True
        return False

    def _vllm(self, stream: str, line_no: int, text: str) -> bool:
        if "vLLM API server version" in text:
            self._builder(stream, "vllm", line_no, new=True)
            return True
        if "LLM engine" in text and VLLM_ENGINE_INIT.search(text):
            current = self.streams.get(stream)
            restart = (
                current is None
                or current.engine != "vllm"
                or bool(current.pools)
                or current.failed is not None
            )
            builder = self._builder(stream, "vllm", line_no, new=restart)
            seq = _field(MAX_SEQ_LEN, text)
            if seq:
                hit = Hit(_parse_int(seq.group(1)), line_no, _excerpt(text, *seq.span()))
                builder.contexts[(CTX_CONFIG, "")] = hit
            return True
        pool = VLLM_POOL.search(text) if "KV cache size:" in text else None
        conc = VLLM_CONCURRENCY.search(text) if "Maximum concurrency" in text else None
        if pool:
            hit = Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
            self._add_pool(stream, "vllm", POOL_MAIN, _rank_key(text), hit, last_wins=False)
        if conc:
            # Newer releases print it on the pool's line; pasted logs may run lines together.
            context = _parse_int(conc.group(1))
            hit = Hit(context, line_no, _excerpt(text, *conc.span()))
            self._add_context(stream, "vllm", CTX_MAIN, _rank_key(text), hit)
            try:
                self.streams[stream].concurrency = (float(conc.group(2)), line_no, context)
            except ValueError:
                pass
        if pool or conc:
            return True
        if "max seq len" in text or "No available memory for the cache blocks" in text:
            if self._vllm_failed(stream, line_no, text):
                return True
        if "blocks: " in text:
            blocks = VLLM_BLOCKS.search(text)
            if blocks:
                builder = self._builder(stream, "vllm", line_no)
                if builder.blocks is None:
                    span = blocks.span()
                    builder.blocks = Hit(
                        _parse_int(blocks.group(1)), line_no, _excerpt(text, *span)
                    )
                return True
        current = self.streams.get(stream)
        is_args = "args: " in text
        if "block size to" in text or "block_size" in text:
            size = VLLM_ATTN_BLOCK_SIZE.search(text) or _field(VLLM_BLOCK_SIZE, text)
            in_vllm = current is not None and current.engine == "vllm"
            if size and (in_vllm or is_args):
                builder = self._builder(stream, "vllm", line_no)
                builder.block_size = Hit(int(size.group(1)), line_no, _excerpt(text, *size.span()))
                current = builder
        if current is not None and current.engine == "vllm":
            role = VLLM_KV_ROLE.search(text) if "kv_role" in text else None
            if role:
                current.role_raw = role.group(1)
                current.role = VLLM_ROLES.get(role.group(1))
            if is_args and "max_model_len" in text:
                arg = _field(VLLM_ARGS_MAX_MODEL_LEN, text)
                if arg:
                    hit = Hit(_parse_int(arg.group(1)), line_no, _excerpt(text, *arg.span()))
                    current.contexts[(CTX_ARGS, "")] = hit
            if role or is_args:
                return True
        return False

    def _vllm_failed(self, stream: str, line_no: int, text: str) -> bool:
        failed = VLLM_FAILED.search(text)
        v0_failed = None if failed else VLLM_V0_FAILED.search(text)
        no_memory = None
        if not (failed or v0_failed) and "No available memory for the cache blocks" in text:
            no_memory = text.index("No available memory for the cache blocks")
        if not (failed or v0_failed or no_memory is not None):
            return False
        builder = self._builder(stream, "vllm", line_no)
        if builder.failed is not None:
            return True  # the same error, printed again by the traceback
        if failed:
            excerpt = _excerpt(text, *failed.span())
            builder.failed_kind = "max_seq_len"
            value = _parse_int(failed.group(1))
            builder.contexts[(CTX_MAIN, "")] = Hit(value, line_no, excerpt)
            estimated = VLLM_ESTIMATED.search(text)
            if estimated:
                builder.estimated_len = _parse_int(estimated.group(1))
        elif v0_failed:
            excerpt = _excerpt(text, *v0_failed.span())
            builder.failed_kind = "max_seq_len"
            value = _parse_int(v0_failed.group(1))
            builder.contexts[(CTX_MAIN, "")] = Hit(value, line_no, excerpt)
            pool = _parse_int(v0_failed.group(2))
            builder.pools[(POOL_MAIN, "")] = Hit(pool, line_no, excerpt)
        else:
            assert no_memory is not None
            excerpt = _excerpt(text, no_memory, no_memory + 40)
            builder.failed_kind = "no_memory"
        builder.failed = Hit(0, line_no, excerpt)
        return True

    def _trtllm(self, stream: str, line_no: int, text: str) -> bool:
        if "LLM version" in text and TRT_BANNER.search(text):
            current = self.streams.get(stream)
            # run.py of 0.8 prints its banner after the engine's KV lines: it then names the
            # instance already read instead of starting a new one.
            attach = current is not None and current.engine == "trtllm" and not current.banner_seen
            builder = self._builder(stream, "trtllm", line_no, new=not attach)
            builder.banner_seen = True
            return True
        pool = TRT_POOL.search(text) if "paged KV cache (" in text else None
        if pool is None and "tokens in paged KV cache" in text:
            pool = TRT_POOL_OLD.search(text)
        if pool:
            hit = Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
            # TensorRT-LLM may allocate a first KV cache to measure memory, then the real one:
            # inside one instance (between version banners) the last allocation wins.
            self._add_pool(stream, "trtllm", POOL_MAIN, _rank_key(text), hit, last_wins=True)
            return True
        if "bytes for k/v cache" in text:
            self._builder(stream, "trtllm", line_no)  # 0.8 and older: the pool follows
            return True
        if "KV cache primary pool" in text or "tokens per block" in text:
            blocks = TRT_PRIMARY_BLOCKS.search(text)
            per_block = TRT_TOKENS_PER_BLOCK.search(text)
            if blocks or per_block:
                builder = self._builder(stream, "trtllm", line_no)
                if blocks:
                    span = blocks.span()
                    value = _parse_int(blocks.group(1))
                    builder.trt_primary_blocks = Hit(value, line_no, _excerpt(text, *span))
                if per_block:
                    span = per_block.span()
                    value = _parse_int(per_block.group(1))
                    builder.trt_tokens_per_block = Hit(value, line_no, _excerpt(text, *span))
                length = TRT_MAX_SEQUENCE_LENGTH.search(text)
                if length:
                    hit = Hit(_parse_int(length.group(1)), line_no, _excerpt(text, *length.span()))
                    self._add_context(stream, "trtllm", CTX_CONFIG, _rank_key(text), hit)
                return True
        if "Adjusted max_seq_len" in text or "reduced to" in text:
            adjusted = TRT_ADJUSTED.search(text) or TRT_REDUCED.search(text)
            if adjusted:
                span = adjusted.span()
                hit = Hit(_parse_int(adjusted.group(1)), line_no, _excerpt(text, *span))
                self._add_context(stream, "trtllm", CTX_MAIN, _rank_key(text), hit)
                self.streams[stream].trt_reduced = hit
                return True
        if "max_seq_len=" not in text and "maxSequenceLen" not in text:
            return False
        current = self.streams.get(stream)
        in_trt = current is not None and current.engine == "trtllm"
        if not in_trt and not TRT_CUE.search(text):
            return False  # a max_seq_len of something else
        seq = _field(MAX_SEQ_LEN, text) or TRT_CPP_MAX_SEQ_LEN.search(text)
        if seq:
            hit = Hit(_parse_int(seq.group(1)), line_no, _excerpt(text, *seq.span()))
            self._add_context(stream, "trtllm", CTX_CONFIG, _rank_key(text), hit)
            return True
        return False

    def _tgi(self, stream: str, line_no: int, text: str) -> bool:
        if "Args {" in text and (
            "model_id" in text or "text_generation" in text or text.rstrip().endswith("Args {")
        ):
            builder = self._builder(stream, "tgi", line_no, new=True)
            self._tgi_max_total(builder, stream, line_no, text)
            return True
        if "max_total_tokens" in text or "Maximum total tokens defaulted" in text:
            default = TGI_DEFAULT.search(text)
            if default:
                span = default.span()
                hit = Hit(_parse_int(default.group(1)), line_no, _excerpt(text, *span))
                self._add_context(stream, "tgi", CTX_MAIN, "", hit)
                return True
            current = self.streams.get(stream)
            if current is not None and current.engine == "tgi":
                return self._tgi_max_total(current, stream, line_no, text)
            return False
        if "max batch total tokens" in text:
            pool = TGI_POOL.search(text)
            if pool:
                hit = Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
                self._add_pool(stream, "tgi", POOL_MAIN, "", hit, last_wins=False)
                return True
        return False

    def _tgi_max_total(self, builder: Builder, stream: str, line_no: int, text: str) -> bool:
        match = _field(TGI_MAX_TOTAL, text)
        if match:
            hit = Hit(_parse_int(match.group(1)), line_no, _excerpt(text, *match.span()))
            builder.contexts[(CTX_CONFIG, "")] = hit
            return True
        if TGI_MAX_TOTAL_OPEN.search(text):
            self.pending_tgi[stream] = (line_no, text)
            return True
        return False

    # -- result -----------------------------------------------------------------------------
    def result(
        self, name: str, *, read_error: dict[str, Any] | None, is_gzip: bool
    ) -> LogParseResult:
        builders = sorted([*self.finished, *self.streams.values()], key=lambda b: b.first_line)
        instances: list[EngineInstance] = []
        notes: list[dict[str, Any]] = []
        for builder in builders:
            instance, instance_notes = finish(builder)
            notes.extend(instance_notes)
            if instance is not None:
                instances.append(instance)
        usable = any(
            i.pool_tokens is not None or i.context_tokens is not None or i.failed_start
            for i in instances
        )
        engines = sorted({i.engine for i in instances})
        engine = engines[0] if len(engines) == 1 else ("mixed" if engines else None)
        if read_error is not None:
            if not usable:
                reason = note("corrupt_gzip_after" if is_gzip else "unreadable_after", **read_error)
                return not_parsed(name, reason, dedupe(notes), tuple(instances), engine)
            notes.append(note("partial_read_gzip" if is_gzip else "partial_read", **read_error))
        if not usable:
            if not self.saw_text:
                reason = note("blank_lines_only")
            elif self.engines_seen:
                labels = [ENGINE_LABELS[e] for e in sorted(self.engines_seen)]
                reason = note("engine_lines_without_figures", engines=labels)
            else:
                reason = note("no_supported_engine")
            return not_parsed(name, reason, dedupe(notes), tuple(instances), engine)
        draft = LogParseResult(
            source_name=name, parsed=True, engine=engine, instances=tuple(instances)
        )
        pool_inst = draft._pool_instance()
        ctx_inst = draft._context_instance()
        if (
            pool_inst is not None
            and ctx_inst is not None
            and pool_inst is not ctx_inst
            and len(instances) > 1
        ):
            notes.append(
                note(
                    "pool_and_context_from_different_instances",
                    pool=pool_inst.pool_tokens,
                    pool_line=pool_inst.pool_line,
                    pool_role=pool_inst.role,
                    context=ctx_inst.context_tokens,
                    context_line=ctx_inst.context_line,
                    context_role=ctx_inst.role,
                )
            )
        return LogParseResult(
            source_name=name,
            parsed=True,
            engine=engine,
            instances=tuple(instances),
            reason=None,
            notes=dedupe(notes),
        )
