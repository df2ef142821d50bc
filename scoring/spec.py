"""Rulesets and the frameworks catalogue as plain, immutable data read from YAML (no ORM)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from questionnaires.spec import CatalogError, Text, content_hash, parse_text, read_yaml

SEVERITIES = ("critical", "high", "medium", "low")
CATALOG_DIR = Path(__file__).resolve().parent / "catalog"
FRAMEWORKS_FILE = CATALOG_DIR / "frameworks.yaml"


@dataclass(frozen=True)
class FrameworkRef:
    id: str
    jurisdiction: str
    family: Text
    title: Text
    confidence: str  # "V": read in the primary source; "S": as summarised by secondary sources

    @property
    def as_summarised(self) -> bool:
        return self.confidence == "S"


@dataclass(frozen=True)
class RuleSpec:
    id: str
    severity: str
    when: str
    title: Text
    rationale: Text
    remediation: Text
    references: tuple[str, ...]
    fires_when_blank: tuple[str, ...] = ()
    section: str | None = None  # overrides "the section of the first question read"


@dataclass(frozen=True)
class DerivedValue:
    """A value the ruleset computes from answers (e.g. `pool`), with what readers call it."""

    name: str
    expression: str
    label: Text | None = None  # shown wherever a finding cites the value
    unit: str | None = None  # a unit code of the questionnaire (`tokens`)


@dataclass(frozen=True)
class RulesetSpec:
    slug: str
    version: str
    questionnaire: str  # "slug@version"
    title: Text
    description: Text
    points: Mapping[str, int]
    rules: tuple[RuleSpec, ...]
    content_hash: str
    rules_by_id: Mapping[str, RuleSpec] = field(repr=False, compare=False, hash=False)
    derived: Mapping[str, str] = field(default_factory=dict)  # name → CEL expression
    derived_values: Mapping[str, DerivedValue] = field(default_factory=dict)
    # Questionnaire versions whose answers this ruleset scores: its own `questionnaire` and any
    # older version listed under `applies_to` (whose questions must all be in its own).
    applies_to: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.slug}@{self.version}"


def parse_frameworks(
    data: Mapping[str, Any], *, source: str = "frameworks"
) -> dict[str, FrameworkRef]:
    frameworks: dict[str, FrameworkRef] = {}
    for raw in data.get("frameworks") or []:
        ref_id = raw.get("id")
        where = f"{source}: {ref_id}"
        if not isinstance(ref_id, str) or not ref_id:
            raise CatalogError(f"{source}: a framework reference has no id")
        if ref_id in frameworks:
            raise CatalogError(f"{where}: listed twice")
        if raw.get("confidence") not in ("V", "S"):
            raise CatalogError(f"{where}: confidence must be V or S")
        if raw.get("jurisdiction") not in ("hk", "international"):
            raise CatalogError(f"{where}: jurisdiction must be hk or international")
        frameworks[ref_id] = FrameworkRef(
            id=ref_id,
            jurisdiction=raw["jurisdiction"],
            family=_text(raw.get("family"), f"{where} family"),
            title=_text(raw.get("title"), f"{where} title"),
            confidence=raw["confidence"],
        )
    if not frameworks:
        raise CatalogError(f"{source}: no framework references")
    return frameworks


def _text(value: Any, where: str) -> Text:
    text = parse_text(value, where)
    assert text is not None
    return text


def parse_ruleset(
    data: Mapping[str, Any], frameworks: Mapping[str, FrameworkRef], *, source: str = "ruleset"
) -> RulesetSpec:
    slug, version, questionnaire = data.get("slug"), data.get("version"), data.get("questionnaire")
    if not isinstance(slug, str) or not slug:
        raise CatalogError(f"{source}: 'slug' is required")
    if version is None or str(version) == "":
        raise CatalogError(f"{source}: 'version' is required")
    if not isinstance(questionnaire, str) or "@" not in questionnaire:
        raise CatalogError(f"{source}: 'questionnaire' must read slug@version")
    points = data.get("points") or {}
    if set(points) != set(SEVERITIES) or not all(isinstance(v, int) for v in points.values()):
        raise CatalogError(f"{source}: 'points' must give an integer for {', '.join(SEVERITIES)}")
    rules: list[RuleSpec] = []
    for raw in data.get("rules") or []:
        rule_id = raw.get("id")
        where = f"{source}: rule {rule_id}"
        if not isinstance(rule_id, str) or not rule_id:
            raise CatalogError(f"{source}: a rule has no id")
        if raw.get("severity") not in SEVERITIES:
            raise CatalogError(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
        when = raw.get("when")
        if not isinstance(when, str) or not when.strip():
            raise CatalogError(f"{where}: 'when' (a CEL condition) is required")
        section = raw.get("section")
        if section is not None and (not isinstance(section, str) or not section):
            raise CatalogError(f"{where}: 'section' must be a section code")
        references = tuple(raw.get("references") or ())
        unknown = [ref for ref in references if ref not in frameworks]
        if unknown:
            raise CatalogError(f"{where}: unknown framework reference(s) {', '.join(unknown)}")
        rules.append(
            RuleSpec(
                id=rule_id,
                severity=raw["severity"],
                when=" ".join(when.split()),
                title=_text(raw.get("title"), f"{where} title"),
                rationale=_text(raw.get("rationale"), f"{where} rationale"),
                remediation=_text(raw.get("remediation"), f"{where} remediation"),
                references=references,
                fires_when_blank=tuple(raw.get("fires_when_blank") or ()),
                section=section,
            )
        )
    by_id = {rule.id: rule for rule in rules}
    if len(by_id) != len(rules):
        raise CatalogError(f"{source}: rule ids must be unique")
    if not rules:
        raise CatalogError(f"{source}: the ruleset has no rules")
    derived_values = _parse_derived(data.get("derived"), source)
    also = data.get("applies_to") or []
    if not isinstance(also, list) or not all(isinstance(k, str) and "@" in k for k in also):
        raise CatalogError(f"{source}: 'applies_to' must list questionnaires as slug@version")
    return RulesetSpec(
        slug=slug,
        version=str(version),
        questionnaire=questionnaire,
        title=_text(data.get("title"), f"{source} title"),
        description=parse_text(data.get("description"), f"{source} description", optional=True)
        or Text("", ""),
        points=dict(points),
        rules=tuple(rules),
        content_hash=content_hash(data),
        rules_by_id=by_id,
        derived={name: value.expression for name, value in derived_values.items()},
        derived_values=derived_values,
        applies_to=tuple(dict.fromkeys([questionnaire, *also])),
    )


def _parse_derived(raw: Any, source: str) -> dict[str, DerivedValue]:
    """`derived:` maps a name to a CEL expression, or to `{expression, label, unit}`."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CatalogError(f"{source}: 'derived' must map names to CEL expressions")
    values: dict[str, DerivedValue] = {}
    for name, entry in raw.items():
        where = f"{source}: derived value {name}"
        if not isinstance(name, str) or not name.isidentifier():
            raise CatalogError(f"{where}: the name must be an identifier")
        if isinstance(entry, str):
            entry = {"expression": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("expression"), str):
            raise CatalogError(f"{where}: give a CEL expression (or a mapping with 'expression')")
        unit = entry.get("unit")
        if unit is not None and not isinstance(unit, str):
            raise CatalogError(f"{where}: 'unit' must be a unit code")
        values[name] = DerivedValue(
            name=name,
            expression=" ".join(entry["expression"].split()),
            label=parse_text(entry.get("label"), f"{where} label", optional=True),
            unit=unit,
        )
    return values


def load_frameworks_file(path: Path = FRAMEWORKS_FILE) -> dict[str, FrameworkRef]:
    return parse_frameworks(read_yaml(path), source=path.name)


def load_ruleset_file(path: Path, frameworks: Mapping[str, FrameworkRef]) -> RulesetSpec:
    return parse_ruleset(read_yaml(path), frameworks, source=path.name)


def builtin_ruleset_files() -> list[Path]:
    return sorted(path for path in CATALOG_DIR.glob("*.yaml") if path != FRAMEWORKS_FILE)
