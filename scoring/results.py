"""What the scoring engine returns: findings with their evidence as data, section coverage and
the score — plain frozen values, the same for the CLI, the API, the web pages and the PDF."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from questionnaires.spec import Text

TIERS = ("low", "medium", "high", "critical")


class EvidenceKind:
    ANSWER = "answer"  # an answer the rule read: `code`, `value` (as stored, JSON)
    DERIVED = "derived"  # a value the ruleset derives from answers: `name`, `value`
    LOG = "log"  # a line of an evidence file: `code`, `file`, `line`, `text`, `values`
    MODEL = "model"  # a model's config.json: `code`, `file`, `values` {"values_per_token": N}
    PROBE = "probe"  # a check of the isolation probe: `code`, `file`, `name` (check), `value`


@dataclass(frozen=True)
class EvidenceItem:
    """One reason a finding fired, as data, so that every page, the PDF and the API present it
    from the same facts in the reader's language (labels are looked up by code or name)."""

    kind: str
    code: str = ""  # question code: the answer's, or the file question a log line came from
    name: str = ""  # derived value name (its label is in the ruleset's data)
    value: Any = None  # the answer as stored (JSON form) or the derived number
    file: str = ""  # evidence file name
    line: int | None = None  # line number in that file
    text: str = ""  # the line as read (ANSI codes and prefixes removed by the parser)
    values: Mapping[str, int] = field(default_factory=dict)  # log: "pool"/"context" → number

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        for name in ("code", "name", "file", "text"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        if self.kind not in (EvidenceKind.LOG, EvidenceKind.MODEL):
            data["value"] = self.value
        if self.line is not None:
            data["line"] = self.line
        if self.values:
            data["values"] = dict(self.values)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvidenceItem:
        return cls(
            kind=str(data.get("kind") or ""),
            code=str(data.get("code") or ""),
            name=str(data.get("name") or ""),
            value=data.get("value"),
            file=str(data.get("file") or ""),
            line=data.get("line"),
            text=str(data.get("text") or ""),
            values=dict(data.get("values") or {}),
        )

    def as_text(self) -> str:
        """The plain, language-neutral line of the CLI and API contract (`CTX-01 = 1048576`,
        `CTX-08 prefill.log line 42: ...`)."""
        name = f" {self.file}" if self.file else ""
        if self.kind == EvidenceKind.LOG:
            return f"{self.code}{name} line {self.line}: {self.text}".rstrip()
        if self.kind == EvidenceKind.MODEL:
            per_token = self.values.get("values_per_token")
            return f"{self.code}{name}: {per_token} KV values per token"
        if self.kind == EvidenceKind.PROBE:
            return f"{self.code}{name}: {self.name} = {_format_value(self.value)}"
        return f"{self.code or self.name} = {_format_value(self.value)}"


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: str
    points: int
    section: str
    title: Text
    references: tuple[str, ...]
    evidence: tuple[EvidenceItem, ...]

    def to_dict(self, language: str = "en") -> dict[str, Any]:
        return {
            "rule": self.rule_id,
            "severity": self.severity,
            "points": self.points,
            "title": self.title.get(language),
            "section": self.section,
            "references": list(self.references),
            "evidence": [item.as_text() for item in self.evidence],
        }


@dataclass(frozen=True)
class SectionCoverage:
    section: str
    rules: int
    fired: int

    @property
    def coverage(self) -> float:
        """Share of the section's rules that did not fire (1.0 = nothing found)."""
        return round((self.rules - self.fired) / self.rules, 4) if self.rules else 1.0


@dataclass(frozen=True)
class ScoreResult:
    questionnaire: str
    ruleset: str
    risk_score: int
    risk_tier: str
    findings: tuple[Finding, ...]
    sections: Mapping[str, SectionCoverage]
    evidence: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    as_of: dt.date | None = None

    @property
    def fired_rule_ids(self) -> set[str]:
        return {finding.rule_id for finding in self.findings}

    def to_dict(self, language: str = "en") -> dict[str, Any]:
        return {
            "questionnaire": self.questionnaire,
            "ruleset": self.ruleset,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "risk_score": self.risk_score,
            "risk_tier": self.risk_tier,
            "findings": [finding.to_dict(language) for finding in self.findings],
            "sections": {
                code: {"coverage": cov.coverage, "rules": cov.rules, "fired": cov.fired}
                for code, cov in self.sections.items()
            },
            "evidence": {code: _evidence_entry(results) for code, results in self.evidence.items()},
        }


def _evidence_entry(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One question's evidence in the CLI/API shape: the smallest pool and largest context over
    its files, plus every file's own parse result."""
    parsed = [result for result in results if result.get("parsed")]
    pools = [r for r in parsed if r.get("pool") is not None]
    contexts = [r for r in parsed if r.get("context") is not None]
    smallest = min(pools, key=lambda r: r["pool"]) if pools else None
    largest = max(contexts, key=lambda r: r["context"]) if contexts else None
    engines = sorted({r["engine"] for r in parsed if r.get("engine")})
    lines = sorted({*(smallest or {}).get("lines", []), *(largest or {}).get("lines", [])})
    return {
        "parsed": bool(parsed),
        "engine": engines[0] if len(engines) == 1 else ("mixed" if engines else None),
        "pool": smallest["pool"] if smallest else None,
        "context": largest["context"] if largest else None,
        "lines": lines,
        "files": results,
    }


def _format_value(value: Any) -> str:
    if isinstance(value, str | int):
        return str(value)
    if value is None:
        return "(blank)"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value) if value else "(none)"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def rule_changes(before: Iterable[str], after: Iterable[str]) -> tuple[list[str], list[str]]:
    """The rule ids of the findings `after` added and removed against `before`, sorted: the one
    diff of a rescore batch and of the rule workbench's impact."""
    old, new = set(before), set(after)
    return sorted(new - old), sorted(old - new)


class ProblemKind:
    """What a static check of a rule found (`scoring.engine.CompiledRuleset.lint`)."""

    SYNTAX = "syntax"  # the CEL condition does not parse
    UNKNOWN_CODE = "unknown_code"  # it reads a name that is no question code nor value
    TYPE = "type"  # it fails, or does not give true or false, for some typed answer
    NOT_AN_OPTION = "not_an_option"  # it compares with a string no question read offers
    SECTION = "section"  # its `section` is not a section of the questionnaire
    RULESET = "ruleset"  # the ruleset as a whole (a derived value, the questionnaire)


@dataclass(frozen=True)
class RuleProblem:
    """One rule's problem, found before any answer is scored. `rule_id` is empty for a problem
    of the ruleset as a whole; `names` are the codes or strings concerned."""

    rule_id: str
    kind: str
    message: str  # the technical detail, in English (the CEL error as it reads)
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadValue:
    """A value a rule's condition reads: a question's answer (`code`), or a derived or evidence
    value (`name` only). `hidden`: the question is not asked given the other answers."""

    name: str
    code: str
    value: Any
    hidden: bool = False


@dataclass(frozen=True)
class RuleOutcome:
    """Whether one rule fired for an answer set, and why: its condition and the values it read.
    `blank` names what stopped it: a value it reads was blank or not asked (the rule is then
    not evaluated, unless it handles the blank itself)."""

    rule_id: str
    severity: str
    title: Text
    section: str
    condition: str
    fired: bool
    reads: tuple[ReadValue, ...]
    blank: tuple[str, ...]


@dataclass(frozen=True)
class Explanation:
    """A scoring (the very `ScoreResult` the workers record) with every rule's outcome."""

    result: ScoreResult
    rules: tuple[RuleOutcome, ...]
