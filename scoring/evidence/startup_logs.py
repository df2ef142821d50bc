"""Read AI inference engines' startup logs (evidence for question CTX-08).

The parser finds, per engine instance in a log, the KV cache pool size in tokens, the context
length, the role (prefill / decode / single node) where the log states it, and the exact line each
number came from. Formats are those of ``engine-logs.md`` of the shared spec: SGLang, vLLM,
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

Pure Python: no Django imports beyond the ``gettext_noop`` marker the messages module us

The parser's parts: this module (the entry point and the byte plumbing: size cap, gzip,
encodings), `startup_log_lines` (line analysis), `startup_log_patterns` (what it looks for),
`startup_log_instances` (an engine instance assembled from its lines) and `startup_log_results`
(what it returns).
"""

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from scoring.evidence.messages import note
from scoring.evidence.startup_log_lines import Parser
from scoring.evidence.startup_log_results import LogParseResult, not_parsed

if TYPE_CHECKING:
    # What io.RawIOBase.readinto is given (any writable buffer); typeshed-only, hence quoted.
    from _typeshed import WriteableBuffer

__all__ = ["DEFAULT_MAX_BYTES", "parse_startup_log", "source_name_of"]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
_LINE_LIMIT = 1024 * 1024  # a longer physical line is read in chunks (same line number)
_HEAD_SIZE = 8192  # bytes sampled to recognise binary data and encodings
_GZIP_MAGIC = b"\x1f\x8b"


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
        return not_parsed(name, note("parser_failed", error=type(exc).__name__))


def source_name_of(source: object) -> str:
    """The file name of a path or of a named stream ("" when it has none)."""
    try:
        if isinstance(source, str | os.PathLike):
            return os.path.basename(os.fspath(source))
        name = getattr(source, "name", "")
        return os.path.basename(name) if isinstance(name, str) else ""
    except Exception:
        return ""


def _parse(source: str | os.PathLike | BinaryIO, name: str, max_bytes: int) -> LogParseResult:
    opened: BinaryIO | None = None
    if isinstance(source, str | os.PathLike):
        try:
            path = os.fspath(source)
            opened = open(path, "rb")  # closed in the finally below
        except (OSError, TypeError, ValueError) as exc:
            return not_parsed(name, note("read_failed", error=_error_text(exc)))
        stream: Any = opened
    elif isinstance(source, bytes | bytearray | memoryview):
        stream = io.BytesIO(bytes(source))
    elif hasattr(source, "read"):
        stream = source
    else:
        return not_parsed(name, note("unsupported_source", type=type(source).__name__))
    try:
        return _parse_stream(stream, name, max_bytes)
    finally:
        if opened is not None:
            opened.close()


def _parse_stream(stream: Any, name: str, max_bytes: int) -> LogParseResult:
    try:
        magic = _read_upto(stream, len(_GZIP_MAGIC))
    except Exception as exc:
        return not_parsed(name, note("read_failed", error=_error_text(exc)))
    is_gzip = magic == _GZIP_MAGIC
    base = _ChainReader(magic, stream)
    source: Any = gzip.GzipFile(fileobj=base, mode="rb") if is_gzip else base
    counted = io.BufferedReader(_CountingReader(source, max_bytes), 64 * 1024)
    too_large = note("too_large_gzip" if is_gzip else "too_large", limit=_human_bytes(max_bytes))
    try:
        head = _read_upto(counted, _HEAD_SIZE)
    except _TooLarge:
        return not_parsed(name, too_large)
    except (OSError, EOFError, zlib.error) as exc:
        if is_gzip:
            return not_parsed(name, note("corrupt_gzip", error=_error_text(exc)))
        return not_parsed(name, note("read_failed", error=_error_text(exc)))

    if not head:
        return not_parsed(name, note("empty_gzip" if is_gzip else "empty_file"))
    encoding = _sniff_encoding(head)
    if encoding is None:
        return not_parsed(name, note("binary_file"))

    rest = io.BufferedReader(_ChainReader(head, counted), 64 * 1024)
    lines = _utf8_lines(rest) if encoding == "utf-8" else _transcoded_lines(rest, encoding)
    parser = Parser()
    read_error: dict[str, Any] | None = None
    try:
        parser.feed(lines)
    except _TooLarge:
        return not_parsed(name, too_large)
    except (OSError, EOFError, zlib.error, UnicodeError) as exc:
        read_error = {"line": parser.last_line, "error": _error_text(exc)}
    return parser.result(name, read_error=read_error, is_gzip=is_gzip)


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

    def readinto(self, buffer: "WriteableBuffer") -> int:
        view = memoryview(buffer).cast("B")
        size = len(view)
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
        view[: len(data)] = data
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

    def readinto(self, buffer: "WriteableBuffer") -> int:
        view = memoryview(buffer).cast("B")
        data = self._source.read(len(view))
        if not data:
            return 0
        self.count += len(data)
        if self.count > self._limit:
            raise _TooLarge
        view[: len(data)] = data
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


def _utf8_lines(reader: BinaryIO) -> Iterator[bytes]:
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


def _transcoded_lines(reader: BinaryIO, encoding: str) -> Iterator[bytes]:
    text = io.TextIOWrapper(reader, encoding=encoding, errors="replace", newline="\n")
    while True:
        line = text.readline(_LINE_LIMIT)
        if not line:
            return
        yield line.lstrip("\ufeff").encode("utf-8")


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
