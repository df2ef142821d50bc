"""The catalogue shipped in the repository: frameworks, questionnaires and rulesets.

Loaded from the YAML files once per process and checked whole — every ruleset is compiled
against its questionnaire, so a syntax or type error in any rule stops the load with the
rule's id. The command line scores against this directly (no database needed); the web app
mirrors it into the database with `manage.py load_catalog`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from questionnaires.spec import (
    CatalogError,
    QuestionnaireSpec,
    builtin_questionnaire_files,
    parse_questionnaire,
    read_yaml,
    version_key,
)

from .engine import CompiledRuleset
from .spec import (
    FRAMEWORKS_FILE,
    FrameworkRef,
    RulesetSpec,
    builtin_ruleset_files,
    load_frameworks_file,
    parse_ruleset,
)


def split_key(key: str) -> tuple[str, str]:
    """`"incident-2026-kv@1"` → `("incident-2026-kv", "1")`."""
    slug, separator, version = key.partition("@")
    if not separator or not slug or not version:
        raise CatalogError(f"“{key}” is not of the form slug@version")
    return slug, version


@dataclass
class Catalog:
    frameworks: Mapping[str, FrameworkRef]
    questionnaires: Mapping[str, QuestionnaireSpec]
    rulesets: Mapping[str, RulesetSpec]
    raw: Mapping[tuple[str, str], dict] = field(default_factory=dict, repr=False)
    _compiled: dict[str, CompiledRuleset] = field(default_factory=dict, repr=False)

    def questionnaire(self, key: str) -> QuestionnaireSpec:
        split_key(key)
        try:
            return self.questionnaires[key]
        except KeyError:
            raise CatalogError(f"unknown questionnaire {key}") from None

    def ruleset(self, key: str) -> RulesetSpec:
        split_key(key)
        try:
            return self.rulesets[key]
        except KeyError:
            raise CatalogError(f"unknown ruleset {key}") from None

    def rulesets_for(self, questionnaire_key: str) -> list[RulesetSpec]:
        """Rulesets written for a questionnaire, oldest version first."""
        matching = [r for r in self.rulesets.values() if r.questionnaire == questionnaire_key]
        return sorted(matching, key=lambda r: (r.slug, version_key(r.version)))

    def newest_ruleset_for(self, questionnaire_key: str) -> RulesetSpec:
        rulesets = self.rulesets_for(questionnaire_key)
        if not rulesets:
            raise CatalogError(f"no ruleset is written for {questionnaire_key}")
        return max(rulesets, key=lambda r: version_key(r.version))

    def compiled(self, ruleset_key: str) -> CompiledRuleset:
        if ruleset_key not in self._compiled:
            ruleset = self.ruleset(ruleset_key)
            self._compiled[ruleset_key] = CompiledRuleset(
                ruleset, self.questionnaire(ruleset.questionnaire)
            )
        return self._compiled[ruleset_key]


def load_catalog_files(
    *,
    frameworks_file: Path = FRAMEWORKS_FILE,
    questionnaire_files: Iterable[Path] | None = None,
    ruleset_files: Iterable[Path] | None = None,
) -> Catalog:
    """Read and check catalogue files; raise `CatalogError` naming the first problem."""
    frameworks = load_frameworks_file(frameworks_file)
    questionnaires: dict[str, QuestionnaireSpec] = {}
    raw: dict[tuple[str, str], dict] = {}
    for path in (
        questionnaire_files if questionnaire_files is not None else builtin_questionnaire_files()
    ):
        data = read_yaml(path)
        spec = parse_questionnaire(data, source=path.name)
        raw[("questionnaire", spec.key)] = data
        if spec.key in questionnaires:
            raise CatalogError(f"{path.name}: {spec.key} is defined twice")
        questionnaires[spec.key] = spec
    rulesets: dict[str, RulesetSpec] = {}
    for path in ruleset_files if ruleset_files is not None else builtin_ruleset_files():
        data = read_yaml(path)
        spec = parse_ruleset(data, frameworks, source=path.name)
        raw[("ruleset", spec.key)] = data
        if spec.key in rulesets:
            raise CatalogError(f"{path.name}: {spec.key} is defined twice")
        if spec.questionnaire not in questionnaires:
            raise CatalogError(f"{path.name}: questionnaire {spec.questionnaire} does not exist")
        rulesets[spec.key] = spec
    catalog = Catalog(
        frameworks=frameworks, questionnaires=questionnaires, rulesets=rulesets, raw=raw
    )
    for key in rulesets:
        catalog.compiled(key)  # compile now: rule errors surface at load time, with the rule id
    return catalog


@lru_cache(maxsize=1)
def builtin_catalog() -> Catalog:
    return load_catalog_files()
