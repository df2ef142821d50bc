"""The isolation probe's result (PRB-02 evidence): the JSON ``manage.py probe`` prints
(``probe.md`` of the shared spec, ``../shared/spec/``), checked and reduced to what the rules read (``probe.X``).

A file that is not such a result is kept as evidence and marked "not parsed", like an
unreadable log. Pure Python: no Django.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from scoring.evidence.json_evidence import read_json_evidence
from scoring.evidence.messages import note

__all__ = ["PROBE_CHECK_OUTCOMES", "ProbeParseResult", "parse_probe_result"]

MAX_PROBE_BYTES = 8 * 1024 * 1024

# The outcomes each check may report (probe.md); "inconclusive" is possible for every check.
PROBE_CHECK_OUTCOMES: dict[str, tuple[str, ...]] = {
    "oversize": ("accepted", "rejected", "overclaimed", "inconclusive"),
    "canary": ("leak", "clean", "inconclusive"),
    "prefix_cache": ("shared", "isolated", "no_cache_seen", "inconclusive"),
}


@dataclass(frozen=True)
class ProbeParseResult:
    source_name: str
    parsed: bool
    endpoint: str = ""
    model: str = ""
    declared_context: int | None = None
    checks: Mapping[str, str] = field(default_factory=dict)  # check → outcome
    finished: str = ""
    probe: Mapping[str, Any] = field(default_factory=dict)  # the whole result, for display
    reason: dict[str, Any] | None = None
    notes: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "probe_result",
            "source_name": self.source_name,
            "parsed": self.parsed,
            "endpoint": self.endpoint,
            "model": self.model,
            "declared_context": self.declared_context,
            "checks": dict(self.checks),
            "finished": self.finished,
            "probe": dict(self.probe),
            "notes": list(self.notes),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ProbeParseResult":
        checks = data.get("checks") or {}
        return cls(
            source_name=str(data.get("source_name") or ""),
            parsed=bool(data.get("parsed")),
            endpoint=str(data.get("endpoint") or ""),
            model=str(data.get("model") or ""),
            declared_context=data.get("declared_context"),
            checks={str(k): str(v) for k, v in checks.items()}
            if isinstance(checks, Mapping)
            else {},
            finished=str(data.get("finished") or ""),
            probe=data.get("probe") or {},
            reason=data.get("reason"),
            notes=tuple(data.get("notes") or ()),
        )


def parse_probe_result(
    source: str | os.PathLike | BinaryIO | bytes,
    *,
    source_name: str = "",
    max_bytes: int = MAX_PROBE_BYTES,
) -> ProbeParseResult:
    """Read and check a probe result given as a path, a binary stream or bytes (never raises)."""
    read = read_json_evidence(
        source, source_name=source_name, max_bytes=min(max_bytes, MAX_PROBE_BYTES)
    )
    name, document = read.name, read.document
    if read.reason is not None:
        return ProbeParseResult(name, False, reason=read.reason)
    problem = _problem(document)
    if problem is not None:
        return ProbeParseResult(name, False, reason=note("not_a_probe_result", problem=problem))
    assert isinstance(document, Mapping)
    return ProbeParseResult(
        name,
        True,
        endpoint=document["endpoint"],
        model=document["model"],
        declared_context=document["declared_context"],
        checks={check: result["result"] for check, result in document["checks"].items()},
        finished=str(document.get("finished") or ""),
        probe=document,
    )


def _problem(document: object) -> str | None:
    """What makes the document not a probe result (None when it is one)."""
    if not isinstance(document, Mapping):
        return "the top level must be a JSON object"
    for key in ("endpoint", "model"):
        if not isinstance(document.get(key), str) or not document[key].strip():
            return f"'{key}' must be a non-empty string"
    context = document.get("declared_context")
    if isinstance(context, bool) or not isinstance(context, int) or context <= 0:
        return "'declared_context' must be a positive whole number"
    checks = document.get("checks")
    if not isinstance(checks, Mapping) or not checks:
        return "'checks' must be an object with at least one check"
    for check, result in checks.items():
        if check not in PROBE_CHECK_OUTCOMES:
            return f"unknown check '{check}'"
        outcome = result.get("result") if isinstance(result, Mapping) else None
        if outcome not in PROBE_CHECK_OUTCOMES[check]:
            allowed = ", ".join(PROBE_CHECK_OUTCOMES[check])
            return f"'checks.{check}.result' must be one of {allowed}"
    return None
