"""The evidence files as the rules see them: the values a rule reads, the lines a finding shows.

A rule reads evidence through a few variables (`log_pool`, `model_kv_values`, `probe_reuse`,
...), null without a parsed file. Which file gives each value is decided once, here, for a
whole scoring (`FoundEvidence`): the smallest KV pool and the largest context over all startup
logs, the latest model `config.json`, the latest probe result. The same choice then gives a
fired rule's evidence items, so a finding always shows the very line or check it fired on.

Pure, like the engine that uses it: parsed results in (`scoring.evidence`), values and
`EvidenceItem`s out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from questionnaires.conditions import Variable
from scoring.evidence import (
    PROBE_CHECK_OUTCOMES,
    LogParseResult,
    ModelConfigParseResult,
    ProbeParseResult,
)

from .results import EvidenceItem, EvidenceKind

if TYPE_CHECKING:
    from scoring.evidence import EvidenceParseResult


# Values the engine reads from evidence files (not answers), null without a parsed file:
LOG_VARIABLES = ("log_pool", "log_context")  # startup logs: smallest pool, largest context


MODEL_VARIABLE = "model_kv_values"  # model config.json: KV values per token (x bytes/value)


PROBE_VARIABLES = {f"probe_{check}": check for check in PROBE_CHECK_OUTCOMES}  # latest result


PROBE_COUNT = "probe_results"  # how many parsed probe results there are (0, never null)


EVIDENCE_PARSERS = {  # which file question's section an evidence value belongs to
    **dict.fromkeys(LOG_VARIABLES, "startup_log"),
    MODEL_VARIABLE: "model_config",
    **dict.fromkeys([*PROBE_VARIABLES, PROBE_COUNT], "probe_result"),
}


def evidence_variables() -> dict[str, Variable]:
    """The evidence values as variables a rule may read, each with the sample values its
    conditions are type-checked with."""
    variables = {name: Variable(name, (0, 1_048_576)) for name in LOG_VARIABLES}
    variables[MODEL_VARIABLE] = Variable(MODEL_VARIABLE, (1, 163_840))
    for name, check in PROBE_VARIABLES.items():
        variables[name] = Variable(name, PROBE_CHECK_OUTCOMES[check])
    variables[PROBE_COUNT] = Variable(PROBE_COUNT, (0, 1))
    return variables


@dataclass(frozen=True)
class FoundEvidence:
    """What the evidence files gave one scoring: log lines, the model file, the probe result."""

    log_pool: EvidenceItem | None
    log_context: EvidenceItem | None
    model: tuple[str, ModelConfigParseResult] | None
    probe: tuple[str, ProbeParseResult] | None
    probe_count: int = 0

    @classmethod
    def from_files(cls, evidence: Mapping[str, Sequence[EvidenceParseResult]]) -> FoundEvidence:
        """The files' results by question code (each question's files oldest first)."""
        log_pool, log_context = _smallest_pool_largest_context(evidence)
        return cls(
            log_pool,
            log_context,
            _latest(evidence, ModelConfigParseResult),
            _latest(evidence, ProbeParseResult),
            probe_count=sum(
                1
                for results in evidence.values()
                for r in results
                if isinstance(r, ProbeParseResult) and r.parsed
            ),
        )

    def values(self) -> dict[str, Any]:
        """The evidence variables' values (null without a parsed file)."""
        values: dict[str, Any] = {
            "log_pool": self.log_pool.values["pool"] if self.log_pool else None,
            "log_context": self.log_context.values["context"] if self.log_context else None,
        }
        values[MODEL_VARIABLE] = (
            self.model[1].sizing.values_per_token if self.model and self.model[1].sizing else None
        )
        for name, check in PROBE_VARIABLES.items():
            values[name] = self.probe[1].checks.get(check) if self.probe else None
        values[PROBE_COUNT] = self.probe_count
        return values

    def items(
        self, *, reads_logs: bool, reads_model: bool, probe_checks: Sequence[str]
    ) -> list[EvidenceItem]:
        """A fired rule's evidence from the files: the log lines, the model file and the probe
        checks it read."""
        items = _log_items(self.log_pool, self.log_context) if reads_logs else []
        if reads_model and self.model is not None:
            code, model = self.model
            if model.sizing is not None:
                items.append(
                    EvidenceItem(
                        EvidenceKind.MODEL,
                        code=code,
                        file=model.source_name,
                        values={"values_per_token": model.sizing.values_per_token},
                    )
                )
        if self.probe is not None:
            code, probe = self.probe
            for check in dict.fromkeys(probe_checks):
                if check in probe.checks:
                    items.append(
                        EvidenceItem(
                            EvidenceKind.PROBE,
                            code=code,
                            file=probe.source_name,
                            name=check,
                            value=probe.checks[check],
                        )
                    )
        return items


_Kind = TypeVar("_Kind", bound="EvidenceParseResult")


def _latest(
    evidence: Mapping[str, Sequence[EvidenceParseResult]], kind: type[_Kind]
) -> tuple[str, _Kind] | None:
    """(question code, result) of the last parsed result of a kind (files come oldest first)."""
    found: tuple[str, _Kind] | None = None
    for code, results in evidence.items():
        for result in results:
            if isinstance(result, kind) and result.parsed:
                found = (code, result)
    return found


def _log_items(pool: EvidenceItem | None, context: EvidenceItem | None) -> list[EvidenceItem]:
    """The log lines behind `log_pool` and `log_context`; one item when both come from the same
    line of the same file (an SGLang scheduler line carries both)."""
    if (
        pool
        and context
        and (pool.code, pool.file, pool.line)
        == (
            context.code,
            context.file,
            context.line,
        )
    ):
        return [replace(pool, values={**pool.values, **context.values})]
    return [item for item in (pool, context) if item]


def _smallest_pool_largest_context(
    evidence: Mapping[str, Sequence[EvidenceParseResult]],
) -> tuple[EvidenceItem | None, EvidenceItem | None]:
    """The evidence lines of the smallest KV pool and the largest context over all logs."""
    pool: EvidenceItem | None = None
    context: EvidenceItem | None = None
    for code, results in evidence.items():
        for result in results:
            if not isinstance(result, LogParseResult) or not result.parsed:
                continue  # startup logs only
            if result.pool is not None and (pool is None or result.pool < pool.values["pool"]):
                pool = _log_item(
                    code, result, result.pool_line, result.pool_text, "pool", result.pool
                )
            if result.context is not None and (
                context is None or result.context > context.values["context"]
            ):
                context = _log_item(
                    code,
                    result,
                    result.context_line,
                    result.context_text,
                    "context",
                    result.context,
                )
    return pool, context


def _log_item(
    code: str,
    result: LogParseResult,
    line: int | None,
    text: str | None,
    quantity: str,
    number: int,
) -> EvidenceItem:
    return EvidenceItem(
        EvidenceKind.LOG,
        code=code,
        file=result.source_name or "",
        line=line,
        text=text or "",
        values={quantity: number},
    )
