"""Evidence files attached to assessments (pure Python helpers, no Django)."""

from scoring.evidence.startup_logs import (
    DEFAULT_MAX_BYTES,
    ENGINE_LABELS,
    EngineInstance,
    LogParseResult,
    LogSummary,
    parse_startup_log,
    summarize_logs,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENGINE_LABELS",
    "EngineInstance",
    "LogParseResult",
    "LogSummary",
    "parse_startup_log",
    "summarize_logs",
]
