"""What the startup-log parser returns: each engine instance found, one log's result (or why it
was not parsed), and the summary over several logs."""

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from scoring.evidence.messages import ENGINE_LABELS, describe_parse_result


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


def not_parsed(
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


def dedupe(notes: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    unique: list[dict[str, Any]] = []
    for item in notes:
        if item not in unique:
            unique.append(item)
    return tuple(unique)


def _english(text: str) -> str:
    return text
