"""Read AI inference engines' startup logs (evidence for question CTX-08).

The parser finds, per engine instance in a log, the KV cache pool size in tokens, the context
length, the role (prefill / decode / single node) where the log states it, and the exact line each
number came from. Formats are those of ``/work/shared/spec/engine-logs.md``: SGLang, vLLM,
TensorRT-LLM and TGI.

Design rules:

* the input is streamed line by line (a 50 MB log never sits in memory); gzip is detected by its
  magic bytes; the byte cap counts decompressed bytes;
* lines are decoded as UTF-8 with replacement (UTF-16 with a BOM is accepted too), ANSI colour
  codes and carriage returns are removed, and any prefix (timestamps, ``[... TP0]``,
  ``INFO 08-20 10:00:01 [kv_cache_utils.py:634]``, ``(EngineCore_0 pid=123)``, docker compose and
  ``kubectl logs --prefix`` prefixes) is tolerated;
* no input ever raises: anything unreadable is returned as ``parsed=False`` with a reason;
* notes and reasons are data (``{"id", "params"}``), rendered in the reader's language by
  ``scoring.evidence.messages``.

Pure Python: no Django imports beyond the ``gettext_noop`` marker the messages module uses.
"""

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, BinaryIO

from scoring.evidence.messages import ENGINE_LABELS, describe_parse_result, note

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENGINE_LABELS",
    "EngineInstance",
    "LogParseResult",
    "LogSummary",
    "parse_startup_log",
    "summarize_logs",
]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
TEXT_LIMIT = 300

_LINE_LIMIT = 1024 * 1024  # a longer physical line is read in chunks (same line number)
_HEAD_SIZE = 8192  # bytes sampled to recognise binary data and encodings
_GZIP_MAGIC = b"\x1f\x8b"

# Priorities: a higher priority source wins inside one instance.
_POOL_DERIVED = 0  # computed from blocks x block size (vLLM V0, TensorRT-LLM block counts)
_POOL_SGLANG_KV_ALLOC = 1  # "KV Cache is allocated. #tokens: N" (fallback)
_POOL_MAIN = 2  # the engine's own pool figure
_CTX_ARGS = 0  # vLLM argument dump (max_model_len)
_CTX_CONFIG = 1  # configured context (SGLang server_args, vLLM engine config, TRT, TGI Args)
_CTX_MAIN = 2  # the context the engine runs with

_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)"

# Cheap filter run on every raw line; only lines that match are decoded and examined.
_TRIGGER = re.compile(
    rb"ServerArgs\(|KV Cache is allocated|max_total_num_tokens|exceeds the maximum allowed length"
    rb"|Request length is longer|vLLM API server version|LLM engine|KV cache size"
    rb"|Maximum concurrency|max seq len|No available memory|blocks: |kv_role|max_model_len"
    rb"|TensorRT-LLM version|TensorRT LLM version|paged KV cache|bytes for k/v cache|max_seq_len"
    rb"|maxSequenceLen|max sequence length=|KV cache primary pool|tokens per block"
    rb"|Args \{|max_total_tokens|max batch total|Maximum total tokens|block_size|block size to"
)

# Patterns start with a literal (Python's re then scans fast); word boundaries before a field
# name are checked by _field() instead of a leading \b.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_ORPHAN_SGR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")  # colour codes whose ESC was lost

# Stream prefixes that interleave several instances in one file.
_STREAM_COMPOSE = re.compile(r"\s*([A-Za-z0-9][\w.-]*?[-_]\d+)\s+\|\s?")
_STREAM_KUBECTL = re.compile(r"\s*\[(pod/[^\]\s/]+/[^\]\s]+)\]\s")

# Rank tags: SGLang "[2026-08-20 10:00:01 DP0 TP3]", vLLM "(VllmWorker TP0 pid=123)",
# TensorRT-LLM "[RANK 0]".
_RANK_BRACKET = re.compile(r"\[[^\[\]]*?\b((?:(?:DP|TP|PP|EP|CP|ATTN_DP)\d+\s*)+)\]")
_RANK_PROCESS = re.compile(r"\(([A-Za-z][\w .=-]*?)\s+pid=\d+\)")
_RANK_TRT = re.compile(r"\[RANK\s*(\d+)\]")
_DP_GROUP = re.compile(r"\bDP\d+|EngineCore_(?:DP)?\d+")

# SGLang
_SGL_CONTEXT_LENGTH = re.compile(r"context_length=(\d+)")
_SGL_DISAGG_MODE = re.compile(
    r"disaggregation_mode=(?:<[\w.]+:\s*)?(?:'([^']*)'|\"([^\"]*)\"|(\w+))"
)
# Newer releases print more fields first: "KV Cache is allocated. dtype: torch.bfloat16, #tokens: N"
_SGL_KV_ALLOC = re.compile(r"KV Cache is allocated\.?[^#]{0,120}?#tokens:\s*" + _NUM)
_SGL_MAX_TOTAL = re.compile(r"max_total_num_tokens=" + _NUM)
_SGL_CONTEXT_LEN = re.compile(r"context_len=" + _NUM)
_SGL_REJECTION = re.compile(
    r"Input length \(" + _NUM + r" tokens?\) exceeds the maximum allowed length \(" + _NUM
)

# vLLM
_VLLM_ENGINE_INIT = re.compile(r"Initializing an? (?:V1 )?LLM engine\b.*?with config:")
_MAX_SEQ_LEN = re.compile(r"max_seq_len=(\d+)")
_VLLM_ARGS_MAX_MODEL_LEN = re.compile(r"max_model_len['\"]?\s*[:=]\s*(\d+)")
_VLLM_POOL = re.compile(r"KV cache size:\s*" + _NUM + r"\s*tokens")
_VLLM_CONCURRENCY = re.compile(
    r"Maximum concurrency for " + _NUM + r" tokens per request:\s*([\d.]+)\s*x"
)
_VLLM_FAILED = re.compile(
    r"To serve at least one request with the models?'?s? max seq len \(" + _NUM + r"\)"
)
_VLLM_ESTIMATED = re.compile(r"estimated maximum model length is " + _NUM)
_VLLM_V0_FAILED = re.compile(
    r"models?'?s? max seq len \(" + _NUM + r"\) is larger than the maximum number of tokens"
    r" that can be stored in KV cache \(" + _NUM + r"\)"
)
# "# GPU blocks: N, # CPU blocks: M" (V0 and V1 before 0.7.3), "# cuda blocks: N" / "# rocm blocks: N"
# (V0 0.7-0.10 name the platform), and "GPU blocks: N" when a paste lost its "#".
_VLLM_BLOCKS = re.compile(
    r"(?:#\s*)?\b(?:GPU|gpu|cuda|CUDA|rocm|ROCm|ROCM|npu|NPU|xpu|XPU|hpu|HPU|tpu|TPU|neuron)"
    r" blocks:\s*" + _NUM
)
_VLLM_BLOCK_SIZE = re.compile(r"block_size['\"]?\s*[:=]\s*(\d+)")
_VLLM_ATTN_BLOCK_SIZE = re.compile(r"Setting attention block size to (\d+) tokens")
_VLLM_DEFAULT_BLOCK_SIZE = 16  # CUDA and ROCm default in every V0 release
_VLLM_KV_ROLE = re.compile(r"kv_role['\"]?\s*[:=]\s*['\"]?(kv_producer|kv_consumer|kv_both)")

# TensorRT-LLM
_TRT_BANNER = re.compile(r"TensorRT[- ]LLM version:?\s*v?\d")
_TRT_POOL = re.compile(r"paged KV cache \(" + _NUM + r"\)")
# Up to 0.8: "Using N tokens in paged KV cache." (Triton backend: "Using N total tokens in ...")
_TRT_POOL_OLD = re.compile(r"Using " + _NUM + r" (?:total )?tokens in paged KV cache")
_TRT_PRIMARY_BLOCKS = re.compile(r"(?:KV cache primary pool:|primary blocks=)\s*" + _NUM)
_TRT_TOKENS_PER_BLOCK = re.compile(r"tokens per block[:=]\s*" + _NUM)
_TRT_REDUCED = re.compile(r"maxSequenceLen (?:are|is) too large.*?reduced to (\d+)")
_TRT_MAX_SEQUENCE_LENGTH = re.compile(r"max sequence length=(\d+)")
_TRT_ADJUSTED = re.compile(r"Adjusted max_seq_len to (\d+)")
_TRT_CPP_MAX_SEQ_LEN = re.compile(r"maxSequenceLen:\s*(\d+)")
_TRT_CUE = re.compile(
    r"TensorRT-LLM|\[TRT-LLM|TRTGptModel|tensorrt_llm|max_num_requests=|TensorRT LLM"
)

# TGI (its Args are printed with Rust's Debug format, single-line or pretty multi-line)
_TGI_MAX_TOTAL = re.compile(r"max_total_tokens\s*[:=]\s*(?:Some\((?:\s|\\n)*)?(\d+)")
_TGI_MAX_TOTAL_OPEN = re.compile(r"max_total_tokens\s*:\s*Some\(\s*$")
_TGI_CONTINUATION_VALUE = re.compile(r"\s*(\d+)\s*,?\s*")
# 2.x launcher: "Default `max_total_tokens` to N"; 3.x router, when the Args left it None:
# "Maximum total tokens defaulted to N".
_TGI_DEFAULT = re.compile(
    r"(?:Default `?max_total_tokens`? to|Maximum total tokens defaulted to) (\d+)"
)
_TGI_POOL = re.compile(
    r"(?:Setting max batch total tokens to|Inferred max batch total tokens:) (\d+)"
)

_SGLANG_ROLES = {"prefill": "prefill", "decode": "decode", "null": "single", "none": "single"}
_VLLM_ROLES = {"kv_producer": "prefill", "kv_consumer": "decode"}


# --------------------------------------------------------------------------------------------
# Public data


@dataclass(frozen=True)
class EngineInstance:
    """One engine start found in a log, with the numbers it printed."""

    engine: str
    role: str | None  # "prefill" | "decode" | "single" | None (the log does not say)
    pool_tokens: int | None
    pool_line: int | None
    pool_text: str | None
    context_tokens: int | None
    context_line: int | None
    context_text: str | None
    failed_start: bool
    rejections: int

    @property
    def label(self) -> str:
        return ENGINE_LABELS.get(self.engine, self.engine)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LogParseResult:
    """What one uploaded log says. ``parsed`` is False (with ``reason``) when nothing usable."""

    source_name: str
    parsed: bool
    engine: str | None  # "sglang" | "vllm" | "trtllm" | "tgi" | "mixed" | None
    instances: tuple[EngineInstance, ...] = ()
    # {"id", "params"} (see scoring.evidence.messages); English strings in results stored before
    # notes became data.
    reason: dict[str, Any] | str | None = None
    notes: tuple[dict[str, Any] | str, ...] = ()

    # Instances whose numbers describe a running configuration (a failed start does not).
    def _running(self) -> list[EngineInstance]:
        return [i for i in self.instances if not i.failed_start]

    def _pool_instance(self) -> EngineInstance | None:
        found = [i for i in self._running() if i.pool_tokens is not None]
        return min(found, key=lambda i: (i.pool_tokens, i.pool_line or 0)) if found else None

    def _context_instance(self) -> EngineInstance | None:
        found = [i for i in self._running() if i.context_tokens is not None]
        return (
            min(found, key=lambda i: (-(i.context_tokens or 0), i.context_line or 0))
            if found
            else None
        )

    @property
    def pool(self) -> int | None:
        inst = self._pool_instance()
        return inst.pool_tokens if inst else None

    @property
    def pool_line(self) -> int | None:
        inst = self._pool_instance()
        return inst.pool_line if inst else None

    @property
    def pool_text(self) -> str | None:
        inst = self._pool_instance()
        return inst.pool_text if inst else None

    @property
    def context(self) -> int | None:
        inst = self._context_instance()
        return inst.context_tokens if inst else None

    @property
    def context_line(self) -> int | None:
        inst = self._context_instance()
        return inst.context_line if inst else None

    @property
    def context_text(self) -> str | None:
        inst = self._context_instance()
        return inst.context_text if inst else None

    @property
    def lines(self) -> list[int]:
        return sorted({n for n in (self.pool_line, self.context_line) if n is not None})

    @property
    def failed_start(self) -> bool:
        return any(i.failed_start for i in self.instances)

    def describe(self) -> str:
        """The one-line description in English (pages render ``to_dict()`` with
        ``scoring.evidence.describe_parse_result`` in the reader's language)."""
        return describe_parse_result(self.to_dict(), _english)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LogParseResult":
        """Rebuild a result stored with ``to_dict()`` (e.g. beside an uploaded evidence file).

        Raises ``ValueError`` when the data is not such a result.
        """
        try:
            return cls(
                source_name=str(data.get("source_name") or ""),
                parsed=bool(data.get("parsed")),
                engine=data.get("engine"),
                instances=tuple(EngineInstance(**item) for item in data.get("instances") or ()),
                reason=data.get("reason"),
                notes=tuple(data.get("notes") or ()),
            )
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"not a stored parse result: {exc}") from exc

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "startup_log",
            "source_name": self.source_name,
            "parsed": self.parsed,
            "engine": self.engine,
            "pool": self.pool,
            "pool_line": self.pool_line,
            "pool_text": self.pool_text,
            "context": self.context,
            "context_line": self.context_line,
            "context_text": self.context_text,
            "lines": self.lines,
            "failed_start": self.failed_start,
            "instances": [i.to_dict() for i in self.instances],
            "notes": list(self.notes),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class LogSummary:
    """Smallest pool and largest context over several parsed logs (``log.pool`` /
    ``log.context`` in the rules), each with the file and line it came from."""

    pool: int | None
    pool_source: str | None
    pool_line: int | None
    pool_text: str | None
    context: int | None
    context_source: str | None
    context_line: int | None
    context_text: str | None
    sources: tuple[str, ...] = field(default=())

    @property
    def pool_below_context(self) -> bool | None:
        if self.pool is None or self.context is None:
            return None
        return self.pool < self.context

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sources"] = list(self.sources)
        data["pool_below_context"] = self.pool_below_context
        return data


def summarize_logs(results: Sequence[LogParseResult]) -> LogSummary | None:
    """Smallest pool and largest context over all parsed results (ties: the first one).

    Returns None when no parsed result holds a pool or a context (failed starts hold neither).
    """
    pool_pick: tuple[int, str, int | None, str | None] | None = None
    ctx_pick: tuple[int, str, int | None, str | None] | None = None
    sources: list[str] = []
    for result in results:
        if not result.parsed:
            continue
        sources.append(result.source_name)
        pool = result.pool
        if pool is not None and (pool_pick is None or pool < pool_pick[0]):
            pool_pick = (pool, result.source_name, result.pool_line, result.pool_text)
        ctx = result.context
        if ctx is not None and (ctx_pick is None or ctx > ctx_pick[0]):
            ctx_pick = (ctx, result.source_name, result.context_line, result.context_text)
    if pool_pick is None and ctx_pick is None:
        return None
    return LogSummary(
        pool=pool_pick[0] if pool_pick else None,
        pool_source=pool_pick[1] if pool_pick else None,
        pool_line=pool_pick[2] if pool_pick else None,
        pool_text=pool_pick[3] if pool_pick else None,
        context=ctx_pick[0] if ctx_pick else None,
        context_source=ctx_pick[1] if ctx_pick else None,
        context_line=ctx_pick[2] if ctx_pick else None,
        context_text=ctx_pick[3] if ctx_pick else None,
        sources=tuple(sources),
    )


# --------------------------------------------------------------------------------------------
# Entry point


def parse_startup_log(
    source: str | os.PathLike | BinaryIO,
    *,
    source_name: str = "",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LogParseResult:
    """Parse an engine startup log given as a path or a binary stream (never raises)."""
    name = source_name or source_name_of(source)
    try:
        return _parse(source, name, max_bytes)
    except Exception as exc:  # the upload must never be lost to a parser error
        return _not_parsed(name, note("parser_failed", error=type(exc).__name__))


def source_name_of(source: object) -> str:
    """The file name of a path or of a named stream ("" when it has none)."""
    try:
        if isinstance(source, str | os.PathLike):
            return os.path.basename(os.fspath(source))
        name = getattr(source, "name", "")
        return os.path.basename(name) if isinstance(name, str) else ""
    except Exception:
        return ""


def _not_parsed(
    name: str,
    reason: dict[str, Any],
    notes: Sequence[dict[str, Any]] = (),
    instances: tuple[EngineInstance, ...] = (),
    engine: str | None = None,
) -> LogParseResult:
    return LogParseResult(
        source_name=name,
        parsed=False,
        engine=engine,
        instances=instances,
        reason=reason,
        notes=tuple(notes),
    )


def _parse(source: str | os.PathLike | BinaryIO, name: str, max_bytes: int) -> LogParseResult:
    opened: BinaryIO | None = None
    if isinstance(source, str | os.PathLike):
        try:
            path = os.fspath(source)
            opened = open(path, "rb")  # closed in the finally below
        except (OSError, TypeError, ValueError) as exc:
            return _not_parsed(name, note("read_failed", error=_error_text(exc)))
        stream: Any = opened
    elif isinstance(source, bytes | bytearray | memoryview):
        stream = io.BytesIO(bytes(source))
    elif hasattr(source, "read"):
        stream = source
    else:
        return _not_parsed(name, note("unsupported_source", type=type(source).__name__))
    try:
        return _parse_stream(stream, name, max_bytes)
    finally:
        if opened is not None:
            opened.close()


def _parse_stream(stream: Any, name: str, max_bytes: int) -> LogParseResult:
    try:
        magic = _read_upto(stream, len(_GZIP_MAGIC))
    except Exception as exc:
        return _not_parsed(name, note("read_failed", error=_error_text(exc)))
    is_gzip = magic == _GZIP_MAGIC
    base = _ChainReader(magic, stream)
    source: Any = gzip.GzipFile(fileobj=base, mode="rb") if is_gzip else base
    counted = io.BufferedReader(_CountingReader(source, max_bytes), 64 * 1024)
    too_large = note("too_large_gzip" if is_gzip else "too_large", limit=_human_bytes(max_bytes))
    try:
        head = _read_upto(counted, _HEAD_SIZE)
    except _TooLarge:
        return _not_parsed(name, too_large)
    except (OSError, EOFError, zlib.error) as exc:
        if is_gzip:
            return _not_parsed(name, note("corrupt_gzip", error=_error_text(exc)))
        return _not_parsed(name, note("read_failed", error=_error_text(exc)))

    if not head:
        return _not_parsed(name, note("empty_gzip" if is_gzip else "empty_file"))
    encoding = _sniff_encoding(head)
    if encoding is None:
        return _not_parsed(name, note("binary_file"))

    rest = io.BufferedReader(_ChainReader(head, counted), 64 * 1024)
    lines = _utf8_lines(rest) if encoding == "utf-8" else _transcoded_lines(rest, encoding)
    parser = _Parser()
    read_error: dict[str, Any] | None = None
    try:
        parser.feed(lines)
    except _TooLarge:
        return _not_parsed(name, too_large)
    except (OSError, EOFError, zlib.error, UnicodeError) as exc:
        read_error = {"line": parser.last_line, "error": _error_text(exc)}
    return parser.result(name, read_error=read_error, is_gzip=is_gzip)


# --------------------------------------------------------------------------------------------
# Byte plumbing


class _TooLarge(Exception):
    pass


def _read_upto(stream: Any, size: int) -> bytes:
    """Read up to ``size`` bytes, looping over short reads; str chunks are UTF-8 encoded."""
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        chunks.append(bytes(chunk))
        remaining -= len(chunk)
    return b"".join(chunks)


class _ChainReader(io.RawIOBase):
    """Serve ``head`` first, then the rest of ``source`` (any object with ``read``)."""

    def __init__(self, head: bytes, source: Any) -> None:
        super().__init__()
        self._head = head
        self._source = source

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:
        size = len(buffer)
        if size == 0:
            return 0
        if self._head:
            chunk = self._head
        else:
            chunk = self._source.read(size)
            if not chunk:
                return 0
            if isinstance(chunk, str):  # a text-mode stream was handed in
                chunk = chunk.encode("utf-8")
            chunk = bytes(chunk)
        data, self._head = chunk[:size], chunk[size:]
        buffer[: len(data)] = data
        return len(data)


class _CountingReader(io.RawIOBase):
    """Count the (decompressed) bytes read and stop past ``limit``."""

    def __init__(self, source: Any, limit: int) -> None:
        super().__init__()
        self._source = source
        self._limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:
        data = self._source.read(len(buffer))
        if not data:
            return 0
        self.count += len(data)
        if self.count > self._limit:
            raise _TooLarge
        buffer[: len(data)] = data
        return len(data)


def _sniff_encoding(head: bytes) -> str | None:
    """ "utf-8", a UTF-16 codec, or None for binary data."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if b"\x00" in head:
        sample = head[: len(head) - len(head) % 2]
        if len(sample) >= 4:
            odd_zero = sample[1::2].count(0) / (len(sample) // 2)
            even_zero = sample[0::2].count(0) / (len(sample) // 2)
            if odd_zero > 0.9 and even_zero < 0.1:
                return "utf-16-le"
            if even_zero > 0.9 and odd_zero < 0.1:
                return "utf-16-be"
        return None
    text = head[: len(head) - 3 if len(head) > 3 else len(head)].decode("utf-8", "replace")
    if not text:
        text = head.decode("utf-8", "replace")
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f\v\b\x1b"))
    return None if bad > max(1, len(text) // 10) else "utf-8"


def _utf8_lines(reader: io.BufferedReader) -> Iterator[bytes]:
    first = True
    while True:
        raw = reader.readline(_LINE_LIMIT)
        if not raw:
            return
        if first:
            first = False
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
        yield raw


def _transcoded_lines(reader: io.BufferedReader, encoding: str) -> Iterator[bytes]:
    text = io.TextIOWrapper(reader, encoding=encoding, errors="replace", newline="\n")
    while True:
        line = text.readline(_LINE_LIMIT)
        if not line:
            return
        yield line.lstrip("\ufeff").encode("utf-8")


# --------------------------------------------------------------------------------------------
# Line analysis


@dataclass
class _Hit:
    value: int
    line: int
    text: str


class _Builder:
    """One engine instance being assembled."""

    def __init__(self, engine: str, first_line: int) -> None:
        self.engine = engine
        self.first_line = first_line
        self.role: str | None = None
        self.role_raw: str | None = None
        self.pools: dict[tuple[int, str], _Hit] = {}
        self.contexts: dict[tuple[int, str], _Hit] = {}
        self.failed: _Hit | None = None
        self.failed_kind = ""
        self.estimated_len: int | None = None
        self.rejections: dict[str, int] = {}
        self.truncations = 0
        self.banner_seen = False
        # vLLM before 0.7.3 reports blocks, not tokens: tokens = blocks x block size.
        self.blocks: _Hit | None = None
        self.block_size: _Hit | None = None
        # "Maximum concurrency for X tokens per request: Y x": (Y, line, X)
        self.concurrency: tuple[float, int, int] | None = None
        self.server_args_context_none = False
        # TensorRT-LLM: pool = primary blocks x tokens per block when no token count is printed
        self.trt_primary_blocks: _Hit | None = None
        self.trt_tokens_per_block: _Hit | None = None
        self.trt_reduced: _Hit | None = None


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
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "m" in text and "[" in text:
        text = _ORPHAN_SGR.sub("", text).replace("^[", "")
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
    match = _RANK_BRACKET.search(text)
    if match:
        parts.append(" ".join(match.group(1).split()))
    match = _RANK_PROCESS.search(text)
    if match and not match.group(1).startswith("APIServer"):
        parts.append(" ".join(match.group(1).split()))
    match = _RANK_TRT.search(text)
    if match:
        parts.append(f"RANK{match.group(1)}")
    return " ".join(parts)


class _Parser:
    def __init__(self) -> None:
        self.streams: dict[str, _Builder] = {}
        self.finished: list[_Builder] = []
        self.pending_tgi: dict[str, tuple[int, str]] = {}
        self.engines_seen: set[str] = set()
        self.saw_text = False
        self.last_line = 0

    # -- reading ----------------------------------------------------------------------------
    def feed(self, lines: Iterator[bytes]) -> None:
        trigger = _TRIGGER.search
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
        match = _STREAM_COMPOSE.match(text) or _STREAM_KUBECTL.match(text)
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
        prefix = _STREAM_COMPOSE.match(text) or _STREAM_KUBECTL.match(text)
        body = text[prefix.end() :] if prefix else text
        match = _TGI_CONTINUATION_VALUE.fullmatch(body)
        builder = self.streams.get(stream)
        if match and builder is not None and builder.engine == "tgi":
            joined = f"{first_text.strip()}{body.strip()}"
            hit = _Hit(_parse_int(match.group(1)), first_line, _excerpt(joined, 0, 0))
            builder.contexts[(_CTX_CONFIG, "")] = hit

    # -- builders ---------------------------------------------------------------------------
    def _builder(self, stream: str, engine: str, line_no: int, *, new: bool = False) -> _Builder:
        self.engines_seen.add(engine)
        current = self.streams.get(stream)
        if current is not None and not new and current.engine == engine:
            return current
        if current is not None:
            self.finished.append(current)
        fresh = _Builder(engine, line_no)
        self.streams[stream] = fresh
        return fresh

    def _add_pool(
        self, stream: str, engine: str, priority: int, rank: str, hit: _Hit, *, last_wins: bool
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

    def _add_context(self, stream: str, engine: str, priority: int, rank: str, hit: _Hit) -> None:
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
            mode = _SGL_DISAGG_MODE.search(text)
            if mode:
                raw = next(g for g in mode.groups() if g is not None)
                builder.role_raw = raw
                builder.role = _SGLANG_ROLES.get(raw.lower())
            ctx = _field(_SGL_CONTEXT_LENGTH, text)
            if ctx:
                hit = _Hit(_parse_int(ctx.group(1)), line_no, _excerpt(text, *ctx.span()))
                builder.contexts[(_CTX_CONFIG, "")] = hit
            elif "context_length=None" in text:
                builder.server_args_context_none = True
            return True
        kv = _SGL_KV_ALLOC.search(text) if "KV Cache is allocated" in text else None
        total = _field(_SGL_MAX_TOTAL, text) if "max_total_num_tokens=" in text else None
        if kv or total:
            rank = _rank_key(text)
            if kv:
                hit = _Hit(_parse_int(kv.group(1)), line_no, _excerpt(text, *kv.span()))
                self._add_pool(stream, "sglang", _POOL_SGLANG_KV_ALLOC, rank, hit, last_wins=False)
            if total:
                hit = _Hit(_parse_int(total.group(1)), line_no, _excerpt(text, *total.span()))
                self._add_pool(stream, "sglang", _POOL_MAIN, rank, hit, last_wins=False)
                ctx = _field(_SGL_CONTEXT_LEN, text)
                if ctx:
                    hit = _Hit(_parse_int(ctx.group(1)), line_no, _excerpt(text, *ctx.span()))
                    self._add_context(stream, "sglang", _CTX_MAIN, rank, hit)
            return True
        if "exceeds the maximum allowed length" in text and _SGL_REJECTION.search(text):
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
        if "LLM engine" in text and _VLLM_ENGINE_INIT.search(text):
            current = self.streams.get(stream)
            restart = current is None or current.engine != "vllm"
            restart = restart or bool(current.pools) or current.failed is not None
            builder = self._builder(stream, "vllm", line_no, new=restart)
            seq = _field(_MAX_SEQ_LEN, text)
            if seq:
                hit = _Hit(_parse_int(seq.group(1)), line_no, _excerpt(text, *seq.span()))
                builder.contexts[(_CTX_CONFIG, "")] = hit
            return True
        pool = _VLLM_POOL.search(text) if "KV cache size:" in text else None
        conc = _VLLM_CONCURRENCY.search(text) if "Maximum concurrency" in text else None
        if pool:
            hit = _Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
            self._add_pool(stream, "vllm", _POOL_MAIN, _rank_key(text), hit, last_wins=False)
        if conc:
            # Newer releases print it on the pool's line; pasted logs may run lines together.
            context = _parse_int(conc.group(1))
            hit = _Hit(context, line_no, _excerpt(text, *conc.span()))
            self._add_context(stream, "vllm", _CTX_MAIN, _rank_key(text), hit)
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
            blocks = _VLLM_BLOCKS.search(text)
            if blocks:
                builder = self._builder(stream, "vllm", line_no)
                if builder.blocks is None:
                    span = blocks.span()
                    builder.blocks = _Hit(
                        _parse_int(blocks.group(1)), line_no, _excerpt(text, *span)
                    )
                return True
        current = self.streams.get(stream)
        is_args = "args: " in text
        if "block size to" in text or "block_size" in text:
            size = _VLLM_ATTN_BLOCK_SIZE.search(text) or _field(_VLLM_BLOCK_SIZE, text)
            in_vllm = current is not None and current.engine == "vllm"
            if size and (in_vllm or is_args):
                builder = self._builder(stream, "vllm", line_no)
                builder.block_size = _Hit(int(size.group(1)), line_no, _excerpt(text, *size.span()))
                current = builder
        if current is not None and current.engine == "vllm":
            role = _VLLM_KV_ROLE.search(text) if "kv_role" in text else None
            if role:
                current.role_raw = role.group(1)
                current.role = _VLLM_ROLES.get(role.group(1))
            if is_args and "max_model_len" in text:
                arg = _field(_VLLM_ARGS_MAX_MODEL_LEN, text)
                if arg:
                    hit = _Hit(_parse_int(arg.group(1)), line_no, _excerpt(text, *arg.span()))
                    current.contexts[(_CTX_ARGS, "")] = hit
            if role or is_args:
                return True
        return False

    def _vllm_failed(self, stream: str, line_no: int, text: str) -> bool:
        failed = _VLLM_FAILED.search(text)
        v0_failed = None if failed else _VLLM_V0_FAILED.search(text)
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
            builder.contexts[(_CTX_MAIN, "")] = _Hit(value, line_no, excerpt)
            estimated = _VLLM_ESTIMATED.search(text)
            if estimated:
                builder.estimated_len = _parse_int(estimated.group(1))
        elif v0_failed:
            excerpt = _excerpt(text, *v0_failed.span())
            builder.failed_kind = "max_seq_len"
            value = _parse_int(v0_failed.group(1))
            builder.contexts[(_CTX_MAIN, "")] = _Hit(value, line_no, excerpt)
            pool = _parse_int(v0_failed.group(2))
            builder.pools[(_POOL_MAIN, "")] = _Hit(pool, line_no, excerpt)
        else:
            assert no_memory is not None
            excerpt = _excerpt(text, no_memory, no_memory + 40)
            builder.failed_kind = "no_memory"
        builder.failed = _Hit(0, line_no, excerpt)
        return True

    def _trtllm(self, stream: str, line_no: int, text: str) -> bool:
        if "LLM version" in text and _TRT_BANNER.search(text):
            current = self.streams.get(stream)
            # run.py of 0.8 prints its banner after the engine's KV lines: it then names the
            # instance already read instead of starting a new one.
            attach = current is not None and current.engine == "trtllm" and not current.banner_seen
            builder = self._builder(stream, "trtllm", line_no, new=not attach)
            builder.banner_seen = True
            return True
        pool = _TRT_POOL.search(text) if "paged KV cache (" in text else None
        if pool is None and "tokens in paged KV cache" in text:
            pool = _TRT_POOL_OLD.search(text)
        if pool:
            hit = _Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
            # TensorRT-LLM may allocate a first KV cache to measure memory, then the real one:
            # inside one instance (between version banners) the last allocation wins.
            self._add_pool(stream, "trtllm", _POOL_MAIN, _rank_key(text), hit, last_wins=True)
            return True
        if "bytes for k/v cache" in text:
            self._builder(stream, "trtllm", line_no)  # 0.8 and older: the pool follows
            return True
        if "KV cache primary pool" in text or "tokens per block" in text:
            blocks = _TRT_PRIMARY_BLOCKS.search(text)
            per_block = _TRT_TOKENS_PER_BLOCK.search(text)
            if blocks or per_block:
                builder = self._builder(stream, "trtllm", line_no)
                if blocks:
                    span = blocks.span()
                    value = _parse_int(blocks.group(1))
                    builder.trt_primary_blocks = _Hit(value, line_no, _excerpt(text, *span))
                if per_block:
                    span = per_block.span()
                    value = _parse_int(per_block.group(1))
                    builder.trt_tokens_per_block = _Hit(value, line_no, _excerpt(text, *span))
                length = _TRT_MAX_SEQUENCE_LENGTH.search(text)
                if length:
                    hit = _Hit(_parse_int(length.group(1)), line_no, _excerpt(text, *length.span()))
                    self._add_context(stream, "trtllm", _CTX_CONFIG, _rank_key(text), hit)
                return True
        if "Adjusted max_seq_len" in text or "reduced to" in text:
            adjusted = _TRT_ADJUSTED.search(text) or _TRT_REDUCED.search(text)
            if adjusted:
                span = adjusted.span()
                hit = _Hit(_parse_int(adjusted.group(1)), line_no, _excerpt(text, *span))
                self._add_context(stream, "trtllm", _CTX_MAIN, _rank_key(text), hit)
                self.streams[stream].trt_reduced = hit
                return True
        if "max_seq_len=" not in text and "maxSequenceLen" not in text:
            return False
        current = self.streams.get(stream)
        in_trt = current is not None and current.engine == "trtllm"
        if not in_trt and not _TRT_CUE.search(text):
            return False  # a max_seq_len of something else
        seq = _field(_MAX_SEQ_LEN, text) or _TRT_CPP_MAX_SEQ_LEN.search(text)
        if seq:
            hit = _Hit(_parse_int(seq.group(1)), line_no, _excerpt(text, *seq.span()))
            self._add_context(stream, "trtllm", _CTX_CONFIG, _rank_key(text), hit)
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
            default = _TGI_DEFAULT.search(text)
            if default:
                span = default.span()
                hit = _Hit(_parse_int(default.group(1)), line_no, _excerpt(text, *span))
                self._add_context(stream, "tgi", _CTX_MAIN, "", hit)
                return True
            current = self.streams.get(stream)
            if current is not None and current.engine == "tgi":
                return self._tgi_max_total(current, stream, line_no, text)
            return False
        if "max batch total tokens" in text:
            pool = _TGI_POOL.search(text)
            if pool:
                hit = _Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
                self._add_pool(stream, "tgi", _POOL_MAIN, "", hit, last_wins=False)
                return True
        return False

    def _tgi_max_total(self, builder: _Builder, stream: str, line_no: int, text: str) -> bool:
        match = _field(_TGI_MAX_TOTAL, text)
        if match:
            hit = _Hit(_parse_int(match.group(1)), line_no, _excerpt(text, *match.span()))
            builder.contexts[(_CTX_CONFIG, "")] = hit
            return True
        if _TGI_MAX_TOTAL_OPEN.search(text):
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
            instance, instance_notes = _finish(builder)
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
                return _not_parsed(name, reason, _dedupe(notes), tuple(instances), engine)
            notes.append(note("partial_read_gzip" if is_gzip else "partial_read", **read_error))
        if not usable:
            if not self.saw_text:
                reason = note("blank_lines_only")
            elif self.engines_seen:
                labels = [ENGINE_LABELS[e] for e in sorted(self.engines_seen)]
                reason = note("engine_lines_without_figures", engines=labels)
            else:
                reason = note("no_supported_engine")
            return _not_parsed(name, reason, _dedupe(notes), tuple(instances), engine)
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
            notes=_dedupe(notes),
        )


def _pick(
    hits: dict[tuple[int, str], _Hit], *, smallest: bool
) -> tuple[_Hit | None, int | None, list[int]]:
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


def _finish(builder: _Builder) -> tuple[EngineInstance | None, list[dict[str, Any]]]:
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
        match = _DP_GROUP.search(rank)
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
        if pool is not None and pool_priority == _POOL_SGLANG_KV_ALLOC:
            notes.append(note("sglang_pool_from_kv_alloc", line=start, pool_line=pool.line))
        if context is not None and ctx_priority == _CTX_CONFIG:
            notes.append(
                note("sglang_context_from_server_args", line=start, context_line=context.line)
            )
        if context is None and builder.server_args_context_none:
            notes.append(note("sglang_context_unknown", line=start))
    if builder.engine == "vllm" and builder.failed is None:
        if context is not None and ctx_priority is not None and ctx_priority < _CTX_MAIN:
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


def _pool_from_blocks(builder: _Builder) -> list[dict[str, Any]]:
    """Turn a block count into the pool (tokens) when the engine printed no token count.

    vLLM: blocks x the block size the log states, else the CUDA default 16, cross-checked with
    "Maximum concurrency for X tokens per request: Y x" (the engine computes Y as blocks x block
    size / X, so X x Y is the pool to within Y's two decimals). TensorRT-LLM: primary blocks x
    tokens per block. Returns the notes saying which figures were used.
    """
    if builder.engine == "trtllm":
        blocks, per_block = builder.trt_primary_blocks, builder.trt_tokens_per_block
        if blocks is None or per_block is None:
            return []
        tokens = blocks.value * per_block.value
        builder.pools[(_POOL_DERIVED, "")] = _Hit(tokens, blocks.line, blocks.text)
        return [
            note(
                "trtllm_pool_from_blocks",
                line=builder.first_line,
                blocks=blocks.value,
                tokens_per_block=per_block.value,
                blocks_line=blocks.line,
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
        block_size = _VLLM_DEFAULT_BLOCK_SIZE
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
    builder.pools[(_POOL_DERIVED, "")] = _Hit(tokens, builder.blocks.line, builder.blocks.text)
    return notes


def _implied_block_size(blocks: int, product: int, tolerance: float) -> int | None:
    """The power-of-two block size (1 to 1,024 tokens) that makes blocks x size match X x Y."""
    for size in (16, 32, 64, 128, 256, 512, 1024, 8, 4, 2, 1):
        if abs(blocks * size - product) <= tolerance:
            return size
    return None


# --------------------------------------------------------------------------------------------
# Small helpers


def _dedupe(notes: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    unique: list[dict[str, Any]] = []
    for item in notes:
        if item not in unique:
            unique.append(item)
    return tuple(unique)


def _english(text: str) -> str:
    return text


def _human_bytes(size: int) -> str:
    mb = 1024 * 1024
    if size >= mb and size % mb == 0:
        return f"{size // mb} MB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024} KB"
    return f"{size:,} bytes"


def _error_text(exc: BaseException) -> str:
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
