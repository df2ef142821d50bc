"""Evidence files attached to assessments (pure Python helpers, no Django beyond the
``gettext_noop`` marker of the message catalogue).

Presenters render any stored parse result with ``describe_parse_result(data, translate)`` and
``parse_notes(data, translate)`` (``translate`` = the page's ``gettext``).
"""

from scoring.evidence.dispatch import (
    PARSER_KINDS,
    EvidenceParseResult,
    parse_evidence,
    stored_parse_result,
)
from scoring.evidence.kv_sizing import (
    BYTES_PER_VALUE,
    GIB,
    KVSizing,
    ModelConfigError,
    ModelConfigParseResult,
    kv_gib,
    kv_sizing_from_config,
    parse_model_config,
    sizing_report,
)
from scoring.evidence.messages import (
    ENGINE_LABELS,
    NOTE_TEMPLATES,
    describe_parse_result,
    format_number,
    parse_notes,
    parse_reason,
    probe_outcome_label,
)
from scoring.evidence.probe_results import (
    PROBE_CHECK_OUTCOMES,
    ProbeParseResult,
    parse_probe_result,
)
from scoring.evidence.startup_log_results import (
    EngineInstance,
    LogParseResult,
    LogSummary,
    summarize_logs,
)
from scoring.evidence.startup_logs import DEFAULT_MAX_BYTES, parse_startup_log

__all__ = [
    "BYTES_PER_VALUE",
    "DEFAULT_MAX_BYTES",
    "GIB",
    "PARSER_KINDS",
    "PROBE_CHECK_OUTCOMES",
    "EvidenceParseResult",
    "KVSizing",
    "ModelConfigError",
    "ModelConfigParseResult",
    "ProbeParseResult",
    "kv_gib",
    "kv_sizing_from_config",
    "parse_evidence",
    "probe_outcome_label",
    "parse_model_config",
    "parse_probe_result",
    "sizing_report",
    "stored_parse_result",
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
