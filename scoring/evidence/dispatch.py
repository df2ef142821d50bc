"""One entry point for every kind of evidence file: the upload service and `manage.py score`
call `parse_evidence` with the question's parser kind; stored results are read back with
`stored_parse_result`. Both check every figure that scoring reads against its bound
(questionnaires.bounds): a file with a figure out of range is kept, "not parsed", and scoring
goes on without it.

Pure Python: no Django (the parser names come from the catalogue format, questionnaires.spec).
"""

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, BinaryIO, Protocol

from questionnaires.bounds import EVIDENCE_MAXIMUM
from questionnaires.spec import FILE_PARSERS
from scoring.evidence.kv_sizing import ModelConfigParseResult, parse_model_config
from scoring.evidence.messages import note
from scoring.evidence.probe_results import ProbeParseResult, parse_probe_result
from scoring.evidence.startup_log_results import LogParseResult
from scoring.evidence.startup_logs import DEFAULT_MAX_BYTES, parse_startup_log

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
        return within_bounds(
            parse_model_config(source, source_name=source_name, max_bytes=max_bytes)
        )
    if parser == "probe_result":
        return within_bounds(
            parse_probe_result(source, source_name=source_name, max_bytes=max_bytes)
        )
    if parser != "startup_log":
        raise ValueError(f"unknown evidence parser {parser!r}")
    return within_bounds(parse_startup_log(source, source_name=source_name, max_bytes=max_bytes))


def stored_parse_result(data: Mapping[str, Any]) -> EvidenceParseResult:
    """Rebuild a result stored with ``to_dict()`` (results stored before kinds existed are
    startup logs). Raises ``ValueError`` when the data is not a stored result."""
    kind = data.get("kind") or "startup_log"
    if kind == "model_config":
        return within_bounds(ModelConfigParseResult.from_dict(data))
    if kind == "probe_result":
        return within_bounds(ProbeParseResult.from_dict(data))
    return within_bounds(LogParseResult.from_dict(data))


def within_bounds(result: EvidenceParseResult) -> EvidenceParseResult:
    """The result, or the same file "not parsed: value out of range" when a figure scoring reads
    is beyond its bound (in the rules' 64-bit arithmetic it would overflow: issue 28)."""
    if not result.parsed:
        return result
    for field, value, bound in _figures(result):
        maximum = EVIDENCE_MAXIMUM[bound]
        if isinstance(value, int) and value > maximum:
            reason = note("value_out_of_range", field=field, value=value, maximum=maximum)
            if isinstance(result, LogParseResult | ModelConfigParseResult | ProbeParseResult):
                return replace(result, parsed=False, reason=reason)
    return result


def _figures(result: EvidenceParseResult) -> list[tuple[str, object, str]]:
    """(field, value, bound) of each figure of a result that scoring reads or shows."""
    if isinstance(result, LogParseResult):
        return [
            (field, value, "tokens")
            for instance in result.instances
            for field, value in (
                ("pool", instance.pool_tokens),
                ("context", instance.context_tokens),
            )
        ]
    if isinstance(result, ModelConfigParseResult) and result.sizing is not None:
        return [("values_per_token", result.sizing.values_per_token, "values_per_token")]
    if isinstance(result, ProbeParseResult):
        return [("declared_context", result.declared_context, "tokens")]
    return []
