"""One entry point for every kind of evidence file: the upload service and `manage.py score`
call `parse_evidence` with the question's parser kind; stored results are read back with
`stored_parse_result`.

Pure Python: no Django (the parser names come from the catalogue format, questionnaires.spec).
"""

import os
from collections.abc import Mapping
from typing import Any, BinaryIO, Protocol

from questionnaires.spec import FILE_PARSERS
from scoring.evidence.kv_sizing import ModelConfigParseResult, parse_model_config
from scoring.evidence.probe_results import ProbeParseResult, parse_probe_result
from scoring.evidence.startup_logs import DEFAULT_MAX_BYTES, LogParseResult, parse_startup_log

__all__ = ["PARSER_KINDS", "EvidenceParseResult", "parse_evidence", "stored_parse_result"]

PARSER_KINDS = FILE_PARSERS  # the catalogue names a file question's parser (`parser:`)


class EvidenceParseResult(Protocol):
    # Read-only members, so that frozen dataclasses satisfy the protocol.
    @property
    def source_name(self) -> str: ...

    @property
    def parsed(self) -> bool: ...

    def to_dict(self) -> dict[str, Any]: ...


def parse_evidence(
    source: str | os.PathLike | BinaryIO,
    *,
    parser: str = "startup_log",
    source_name: str = "",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> EvidenceParseResult:
    """Parse an evidence file with the parser its question names (never raises)."""
    if parser == "model_config":
        return parse_model_config(source, source_name=source_name, max_bytes=max_bytes)
    if parser == "probe_result":
        return parse_probe_result(source, source_name=source_name, max_bytes=max_bytes)
    if parser != "startup_log":
        raise ValueError(f"unknown evidence parser {parser!r}")
    return parse_startup_log(source, source_name=source_name, max_bytes=max_bytes)


def stored_parse_result(data: Mapping[str, Any]) -> EvidenceParseResult:
    """Rebuild a result stored with ``to_dict()`` (results stored before kinds existed are
    startup logs). Raises ``ValueError`` when the data is not a stored result."""
    kind = data.get("kind") or "startup_log"
    if kind == "model_config":
        return ModelConfigParseResult.from_dict(data)
    if kind == "probe_result":
        return ProbeParseResult.from_dict(data)
    return LogParseResult.from_dict(data)
