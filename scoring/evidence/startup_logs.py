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
* no input ever raises: anything unreadable is returned as ``parsed=False`` with a human reason.

Pure Python: no Django imports.
"""

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, BinaryIO

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

ENGINE_LABELS: dict[str, str] = {
    "sglang": "SGLang",
    "vllm": "vLLM",
    "trtllm": "TensorRT-LLM",
    "tgi": "TGI",
}

_LINE_LIMIT = 1024 * 1024  # a longer physical line is read in chunks (same line number)
_HEAD_SIZE = 8192  # bytes sampled to recognise binary data and encodings
_GZIP_MAGIC = b"\x1f\x8b"

# Priorities: a higher priority source wins inside one instance.
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
    rb"|TensorRT-LLM version|paged KV cache|max_seq_len|maxSequenceLen|Args \{|max_total_tokens"
    rb"|max batch total"
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
_SGL_KV_ALLOC = re.compile(r"KV Cache is allocated\.?\s*#tokens:\s*" + _NUM)
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
_VLLM_V0_BLOCKS = re.compile(r"# (?:GPU|gpu|cuda|CUDA|npu|NPU|xpu|XPU|hpu|HPU) blocks: (\d+)")
_VLLM_KV_ROLE = re.compile(r"kv_role['\"]?\s*[:=]\s*['\"]?(kv_producer|kv_consumer|kv_both)")

# TensorRT-LLM
_TRT_BANNER = re.compile(r"TensorRT-LLM version:?\s*v?\d")
_TRT_POOL = re.compile(r"paged KV cache \(" + _NUM + r"\)")
_TRT_ADJUSTED = re.compile(r"Adjusted max_seq_len to (\d+)")
_TRT_CPP_MAX_SEQ_LEN = re.compile(r"maxSequenceLen:\s*(\d+)")
_TRT_CUE = re.compile(r"TensorRT-LLM|\[TRT-LLM\]|TRTGptModel|tensorrt_llm|max_num_requests=")

# TGI (its Args are printed with Rust's Debug format, single-line or pretty multi-line)
_TGI_MAX_TOTAL = re.compile(r"max_total_tokens\s*[:=]\s*(?:Some\((?:\s|\\n)*)?(\d+)")
_TGI_MAX_TOTAL_OPEN = re.compile(r"max_total_tokens\s*:\s*Some\(\s*$")
_TGI_CONTINUATION_VALUE = re.compile(r"\s*(\d+)\s*,?\s*")
_TGI_DEFAULT = re.compile(r"Default `?max_total_tokens`? to (\d+)")
_TGI_POOL = re.compile(r"Setting max batch total tokens to (\d+)")

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
    reason: str | None = None
    notes: tuple[str, ...] = ()

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
        """One line for the UI, e.g. "SGLang log: pool 681,280 tokens, context 1,048,576 tokens,
        line 31"."""
        if not self.parsed:
            return f"not parsed: {self.reason or 'unknown reason'}"
        if self.engine == "mixed":
            labels = sorted({i.label for i in self.instances})
            head = f"Mixed-engine log ({', '.join(labels)})"
        else:
            head = f"{ENGINE_LABELS.get(self.engine or '', self.engine or 'Engine')} log"
        if len(self.instances) > 1:
            head += f", {len(self.instances)} instances"
            if any(i.role for i in self.instances):
                head += f" ({', '.join(i.role or 'role not stated' for i in self.instances)})"
        parts: list[str] = []
        if self.pool is not None:
            parts.append(f"pool {self.pool:,} tokens")
        if self.context is not None:
            parts.append(f"context {self.context:,} tokens")
        lines = self.lines
        failed = [i for i in self.instances if i.failed_start]
        if failed and not parts:
            first = failed[0]
            what = "failed start"
            if first.context_tokens is not None:
                what += f" (max seq len {first.context_tokens:,} tokens did not fit the KV cache)"
            else:
                what += " (no GPU memory was left for the KV cache)"
            parts.append(what)
            lines = [n for n in (first.context_line or first.pool_line,) if n is not None]
        elif failed:
            parts.append(f"{len(failed)} failed start{'s' if len(failed) > 1 else ''}")
        text = f"{head}: {', '.join(parts)}"
        if lines:
            text += f", {_format_lines(lines)}"
        return text

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
    name = source_name or _default_name(source)
    try:
        return _parse(source, name, max_bytes)
    except Exception as exc:  # the upload must never be lost to a parser error
        return _not_parsed(name, f"the parser failed on this file ({type(exc).__name__})")


def _default_name(source: object) -> str:
    try:
        if isinstance(source, str | os.PathLike):
            return os.path.basename(os.fspath(source))
        name = getattr(source, "name", "")
        return os.path.basename(name) if isinstance(name, str) else ""
    except Exception:
        return ""


def _not_parsed(
    name: str,
    reason: str,
    notes: Sequence[str] = (),
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
            return _not_parsed(name, f"the file could not be read ({_error_text(exc)})")
        stream: Any = opened
    elif isinstance(source, bytes | bytearray | memoryview):
        stream = io.BytesIO(bytes(source))
    elif hasattr(source, "read"):
        stream = source
    else:
        return _not_parsed(name, f"unsupported source ({type(source).__name__})")
    try:
        return _parse_stream(stream, name, max_bytes)
    finally:
        if opened is not None:
            opened.close()


def _parse_stream(stream: Any, name: str, max_bytes: int) -> LogParseResult:
    try:
        magic = _read_upto(stream, len(_GZIP_MAGIC))
    except Exception as exc:
        return _not_parsed(name, f"the file could not be read ({_error_text(exc)})")
    is_gzip = magic == _GZIP_MAGIC
    base = _ChainReader(magic, stream)
    source: Any = gzip.GzipFile(fileobj=base, mode="rb") if is_gzip else base
    counted = io.BufferedReader(_CountingReader(source, max_bytes), 64 * 1024)
    too_large = f"too large: more than {_human_bytes(max_bytes)} of log text"
    if is_gzip:
        too_large += " once decompressed"
    try:
        head = _read_upto(counted, _HEAD_SIZE)
    except _TooLarge:
        return _not_parsed(name, too_large)
    except (OSError, EOFError, zlib.error) as exc:
        if is_gzip:
            return _not_parsed(name, f"corrupt gzip file ({_error_text(exc)})")
        return _not_parsed(name, f"the file could not be read ({_error_text(exc)})")

    if not head:
        return _not_parsed(name, "empty file" + (" (empty gzip archive)" if is_gzip else ""))
    encoding = _sniff_encoding(head)
    if encoding is None:
        return _not_parsed(name, "binary data, not a text log")

    rest = io.BufferedReader(_ChainReader(head, counted), 64 * 1024)
    lines = _utf8_lines(rest) if encoding == "utf-8" else _transcoded_lines(rest, encoding)
    parser = _Parser()
    read_error: str | None = None
    try:
        parser.feed(lines)
    except _TooLarge:
        return _not_parsed(name, too_large)
    except (OSError, EOFError, zlib.error, UnicodeError) as exc:
        kind = "the gzip stream is corrupt or cut short" if is_gzip else "reading failed"
        read_error = f"{kind} after line {parser.last_line} ({_error_text(exc)})"
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
        self.v0_blocks: _Hit | None = None
        self.concurrency: tuple[float, int] | None = None
        self.server_args_context_none = False


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
        if pool:
            hit = _Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
            self._add_pool(stream, "vllm", _POOL_MAIN, _rank_key(text), hit, last_wins=False)
            return True
        conc = _VLLM_CONCURRENCY.search(text) if "Maximum concurrency" in text else None
        if conc:
            hit = _Hit(_parse_int(conc.group(1)), line_no, _excerpt(text, *conc.span()))
            self._add_context(stream, "vllm", _CTX_MAIN, _rank_key(text), hit)
            try:
                self.streams[stream].concurrency = (float(conc.group(2)), line_no)
            except ValueError:
                pass
            return True
        if "max seq len" in text or "No available memory for the cache blocks" in text:
            if self._vllm_failed(stream, line_no, text):
                return True
        if " blocks: " in text:
            blocks = _VLLM_V0_BLOCKS.search(text)
            if blocks:
                builder = self._builder(stream, "vllm", line_no)
                if builder.v0_blocks is None:
                    builder.v0_blocks = _Hit(int(blocks.group(1)), line_no, text)
                return True
        current = self.streams.get(stream)
        if current is not None and current.engine == "vllm":
            role = _VLLM_KV_ROLE.search(text) if "kv_role" in text else None
            if role:
                current.role_raw = role.group(1)
                current.role = _VLLM_ROLES.get(role.group(1))
            is_args = "args: " in text
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
        if "TensorRT-LLM version" in text and _TRT_BANNER.search(text):
            self._builder(stream, "trtllm", line_no, new=True)
            return True
        pool = _TRT_POOL.search(text) if "paged KV cache (" in text else None
        if pool:
            hit = _Hit(_parse_int(pool.group(1)), line_no, _excerpt(text, *pool.span()))
            # TensorRT-LLM may allocate a first KV cache to measure memory, then the real one:
            # inside one instance (between version banners) the last allocation wins.
            self._add_pool(stream, "trtllm", _POOL_MAIN, _rank_key(text), hit, last_wins=True)
            return True
        if "Adjusted max_seq_len" in text:
            adjusted = _TRT_ADJUSTED.search(text)
            if adjusted:
                span = adjusted.span()
                hit = _Hit(_parse_int(adjusted.group(1)), line_no, _excerpt(text, *span))
                self._add_context(stream, "trtllm", _CTX_MAIN, _rank_key(text), hit)
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
        if "max_total_tokens" in text:
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
        if "Setting max batch total tokens" in text:
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
    def result(self, name: str, *, read_error: str | None, is_gzip: bool) -> LogParseResult:
        builders = sorted([*self.finished, *self.streams.values()], key=lambda b: b.first_line)
        instances: list[EngineInstance] = []
        notes: list[str] = []
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
                reason = (
                    f"corrupt gzip file ({read_error})" if is_gzip else f"unreadable ({read_error})"
                )
                return _not_parsed(name, reason, _dedupe(notes), tuple(instances), engine)
            notes.append(f"Only part of the file could be read: {read_error}.")
        if not usable:
            if not self.saw_text:
                reason = "empty file (blank lines only)"
            elif self.engines_seen:
                labels = ", ".join(ENGINE_LABELS[e] for e in sorted(self.engines_seen))
                reason = (
                    f"{labels} lines were found, but no KV pool or context line"
                    " (is the startup part of the log missing?)"
                )
            else:
                reason = (
                    "no startup lines of a supported engine (SGLang, vLLM, TensorRT-LLM, TGI)"
                    " were found"
                )
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
                f"The smallest pool ({pool_inst.pool_tokens:,} tokens, line {pool_inst.pool_line},"
                f" {_role_phrase(pool_inst)}) and the largest context"
                f" ({ctx_inst.context_tokens:,} tokens, line {ctx_inst.context_line},"
                f" {_role_phrase(ctx_inst)}) come from different instances."
            )
        return LogParseResult(
            source_name=name,
            parsed=True,
            engine=engine,
            instances=tuple(instances),
            reason=None,
            notes=_dedupe(notes),
        )


def _role_phrase(instance: EngineInstance) -> str:
    if instance.role in ("prefill", "decode"):
        return f"{instance.role} instance"
    if instance.role == "single":
        return "single-node instance"
    return f"{instance.label} instance"


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


def _finish(builder: _Builder) -> tuple[EngineInstance | None, list[str]]:
    label = ENGINE_LABELS[builder.engine]
    notes: list[str] = []
    pool, pool_priority, pool_values = _pick(builder.pools, smallest=True)
    context, ctx_priority, ctx_values = _pick(builder.contexts, smallest=False)
    role = builder.role
    where = f"{label} instance starting at line {builder.first_line}"

    # Rejections: ranks of one data-parallel group print the same request, so take the
    # largest count within a group and add the groups up.
    groups: dict[str, int] = {}
    for rank, count in builder.rejections.items():
        match = _DP_GROUP.search(rank)
        group = match.group(0) if match else ""
        groups[group] = max(groups.get(group, 0), count)
    rejections = sum(groups.values())

    if builder.failed is None and pool is None and context is None and rejections == 0:
        what = f" ({role})" if role else ""
        notes.append(
            f"{_article(label).capitalize()} {label} instance{what} starts at line"
            f" {builder.first_line} but logs no KV pool or context line (is the log cut short?)."
        )
        if builder.v0_blocks is not None:
            notes.append(_v0_blocks_note(builder))
        return None, notes

    if builder.failed is not None:
        if builder.failed_kind == "max_seq_len" and context is not None:
            text = (
                f"vLLM refused to start (line {builder.failed.line}): one request at the model's"
                f" max seq len ({context.value:,} tokens) does not fit in the KV cache"
            )
            if builder.estimated_len is not None:
                text += f" (vLLM estimates {builder.estimated_len:,} tokens would fit)"
        else:
            text = (
                f"vLLM refused to start (line {builder.failed.line}): no GPU memory was left"
                " for the KV cache"
            )
        notes.append(text + "; this log is a failed start, not a running configuration.")

    if len(pool_values) > 1 and pool is not None:
        values = ", ".join(f"{v:,}" for v in pool_values)
        notes.append(
            f"Ranks of the {where} report different pools ({values}): the smallest is used."
        )
    if len(ctx_values) > 1 and context is not None:
        values = ", ".join(f"{v:,}" for v in ctx_values)
        notes.append(
            f"Ranks of the {where} report different contexts ({values}): the largest is used."
        )
    if builder.engine == "sglang":
        if pool is not None and pool_priority == _POOL_SGLANG_KV_ALLOC:
            notes.append(
                f"The {where} has no max_total_num_tokens line: the pool is taken from"
                f" 'KV Cache is allocated' (line {pool.line})."
            )
        if context is not None and ctx_priority == _CTX_CONFIG:
            notes.append(
                f"The {where} has no scheduler context_len line: the context is the configured"
                f" context_length from the server arguments (line {context.line})."
            )
        if context is None and builder.server_args_context_none:
            notes.append(
                f"The {where} sets context_length=None (the model's default) and has no"
                " scheduler line: its context is unknown."
            )
    if builder.engine == "vllm" and builder.failed is None:
        if context is not None and ctx_priority is not None and ctx_priority < _CTX_MAIN:
            notes.append(
                f"The {where} has no 'Maximum concurrency' line: the context is the configured"
                f" max_model_len (line {context.line})."
            )
        if builder.concurrency is not None and builder.concurrency[0] < 1.0:
            notes.append(
                f"vLLM reports a maximum concurrency of {builder.concurrency[0]:.2f}x"
                f" (line {builder.concurrency[1]}): one full-length request does not fit the pool."
            )
        if pool is None and builder.v0_blocks is not None:
            notes.append(_v0_blocks_note(builder))
    if builder.engine == "tgi" and context is None and pool is not None:
        notes.append(
            f"The {where} prints no max_total_tokens (Args or default): its context is unknown."
        )
    if builder.truncations:
        plural = "s were" if builder.truncations > 1 else " was"
        notes.append(
            f"{builder.truncations} prompt{plural} silently truncated to fit the KV pool or"
            f" context on the {where} (--allow-auto-truncate)."
        )
    if rejections:
        noun = "oversized prompts were" if rejections > 1 else "oversized prompt was"
        if role in ("prefill", "decode"):
            notes.append(
                f"{rejections} {noun} rejected on a {role} instance (disaggregated): check that"
                " clients received errors"
            )
        elif role == "single":
            notes.append(
                f"{rejections} {noun} rejected on a single-node instance (on a single node the"
                " client receives the engine's error)"
            )
        else:
            notes.append(
                f"{rejections} {noun} rejected on {_article(label)} {label} instance whose role"
                " the log does not state: if it is disaggregated, check that clients received"
                " errors"
            )
    if builder.role_raw is not None and role is None and builder.role_raw != "kv_both":
        notes.append(f"Unknown disaggregation mode {builder.role_raw!r} on the {where}.")

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


def _v0_blocks_note(builder: _Builder) -> str:
    assert builder.v0_blocks is not None
    blocks = builder.v0_blocks.value
    return (
        f"vLLM (V0) reports its KV cache in blocks ({blocks:,} GPU blocks, line"
        f" {builder.v0_blocks.line}), not tokens: with the default block size of 16 that is about"
        f" {blocks * 16:,} tokens. Not used as the pool."
    )


# --------------------------------------------------------------------------------------------
# Small helpers


def _article(label: str) -> str:
    return "an" if label[:1] in "AEFHILMNORSX" else "a"


def _dedupe(notes: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(notes))


def _format_lines(lines: Sequence[int]) -> str:
    if len(lines) == 1:
        return f"line {lines[0]}"
    if len(lines) == 2 and lines[1] == lines[0] + 1:
        return f"lines {lines[0]}–{lines[1]}"
    return "lines " + ", ".join(str(n) for n in lines[:-1]) + f" and {lines[-1]}"


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
