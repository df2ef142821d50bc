"""Reading a small JSON evidence file (a model's config.json, a probe result): the one preamble
of their parsers, size limit and encoding included."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, BinaryIO

from scoring.evidence.messages import note
from scoring.evidence.startup_logs import source_name_of


@dataclass(frozen=True)
class JsonEvidence:
    name: str  # the file's name, as the parse result reports it
    document: Any  # the decoded JSON; None when it could not be read
    reason: dict[str, Any] | None  # why not (a note), or None


def read_json_evidence(
    source: str | os.PathLike | BinaryIO | bytes, *, source_name: str, max_bytes: int
) -> JsonEvidence:
    """A small JSON evidence file given as a path, a binary stream or bytes: its name and its
    document, or why it cannot be read; never raises."""
    name = source_name or source_name_of(source)
    try:
        if isinstance(source, bytes | bytearray):
            raw = bytes(source[: max_bytes + 1])
        elif isinstance(source, str | os.PathLike):
            with open(source, "rb") as handle:
                raw = handle.read(max_bytes + 1)
        else:
            raw = source.read(max_bytes + 1)
            raw = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    except (OSError, ValueError, TypeError) as exc:
        return JsonEvidence(name, None, note("read_failed", error=f"{type(exc).__name__}: {exc}"))
    if len(raw) > max_bytes:
        return JsonEvidence(name, None, note("too_large", limit=f"{max_bytes:,} bytes"))
    if not raw.strip():
        return JsonEvidence(name, None, note("empty_file"))
    try:
        return JsonEvidence(name, json.loads(raw.decode("utf-8-sig")), None)
    except (ValueError, RecursionError) as exc:
        # ValueError: not JSON (JSONDecodeError, UnicodeDecodeError) or a number of more digits
        # than Python converts (4,300).
        return JsonEvidence(name, None, note("not_json", error=str(exc)[:200]))
