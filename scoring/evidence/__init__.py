"""Evidence files attached to assessments (pure Python helpers, no Django beyond the
``gettext_noop`` marker of the message catalogue).

Presenters render any stored parse result with ``describe_parse_result(data, translate)`` and
``parse_notes(data, translate)`` (``translate`` = the page's ``gettext``).
"""

from scoring.evidence.messages import (
    ENGINE_LABELS,
    NOTE_TEMPLATES,
    describe_parse_result,
    format_number,
    parse_notes,
    parse_reason,
)
from scoring.evidence.startup_logs import (
    DEFAULT_MAX_BYTES,
    EngineInstance,
    LogParseResult,
    LogSummary,
    parse_startup_log,
    summarize_logs,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENGINE_LABELS",
    "NOTE_TEMPLATES",
    "EngineInstance",
    "LogParseResult",
    "LogSummary",
    "describe_parse_result",
    "format_number",
    "parse_notes",
    "parse_reason",
    "parse_startup_log",
    "summarize_logs",
]
