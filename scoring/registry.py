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
from typing import Protocol, TypeVar

from questionnaires.spec import (
    CatalogError,
    QuestionnaireSpec,
    builtin_questionnaire_files,
    parse_questionnaire,
    read_yaml,
    resolve_extension,
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


class _Versioned(Protocol):
    @property
    def version(self) -> str: ...


VersionedT = TypeVar("VersionedT", bound=_Versioned)


def default_ruleset(applicable: Iterable[VersionedT]) -> VersionedT | None:
    """The one choice of ruleset: among the rulesets that apply to an answer set's
    questionnaire version, the newest (None when none applies). Every entry point scores with
    it — `manage.py score` (through `Catalog.default_ruleset_for`), a submission or rescore from
    the API, the web app or the vendor portal, answers imported from a workbook and then
    submitted (through `scoring.selectors.default_ruleset_for`) — and it is the ruleset the
    rescore page offers first.

    Why the newest that applies, not the newest written for that version: each version keeps
    every rule of the one before unchanged (v2.md, v3.md: ruleset v3 scores v1, v2 and v3
    answers), and a rule that reads a question the answers lack does not fire. So on older
    answers the newest ruleset finds all that an older one found, plus what newer rules read
    from evidence those answers can carry (a v2 assessment's probe result saying
    `overclaimed`). A vendor still answering an older version — a link sent before v3 was
    published — is then judged with the same knowledge as one answering the newest, scores
    across a portfolio are comparable, and the same answers scored offline with
    `manage.py score` give what the app records.

    A new submission takes this choice by itself: it has no score yet to compare with. A rescore
    batch names its ruleset explicitly (this one is the default offered), because it replaces
    the current score of assessments already decided on and shows the impact before and after;
    publishing a ruleset changes no stored score until an organization rescores. `--ruleset`
    on the command line scores with an older one deliberately.
    """
    return max(applicable, key=lambda ruleset: version_key(ruleset.version), default=None)


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
        """Rulesets that score answers of a questionnaire version, oldest version first."""
        matching = [r for r in self.rulesets.values() if questionnaire_key in r.applies_to]
        return sorted(matching, key=lambda r: (r.slug, version_key(r.version)))

    def default_ruleset_for(self, questionnaire_key: str) -> RulesetSpec:
        """The ruleset that scores answers of the questionnaire version by default
        (`default_ruleset`: the newest that applies to it)."""
        ruleset = default_ruleset(self.rulesets_for(questionnaire_key))
        if ruleset is None:
            raise CatalogError(f"no ruleset scores answers of {questionnaire_key}")
        return ruleset

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
    questionnaire_data = _resolved(
        questionnaire_files if questionnaire_files is not None else builtin_questionnaire_files()
    )
    for path, data in questionnaire_data:
        questionnaire = parse_questionnaire(data, source=path.name)
        raw[("questionnaire", questionnaire.key)] = data
        if questionnaire.key in questionnaires:
            raise CatalogError(f"{path.name}: {questionnaire.key} is defined twice")
        questionnaires[questionnaire.key] = questionnaire
    rulesets: dict[str, RulesetSpec] = {}
    ruleset_data = _resolved(
        ruleset_files if ruleset_files is not None else builtin_ruleset_files()
    )
    for path, data in ruleset_data:
        ruleset = parse_ruleset(data, frameworks, source=path.name)
        raw[("ruleset", ruleset.key)] = data
        if ruleset.key in rulesets:
            raise CatalogError(f"{path.name}: {ruleset.key} is defined twice")
        for key in ruleset.applies_to:
            if key not in questionnaires:
                raise CatalogError(f"{path.name}: questionnaire {key} does not exist")
            check_answers_fit(ruleset, questionnaires[ruleset.questionnaire], questionnaires[key])
        rulesets[ruleset.key] = ruleset
    catalog = Catalog(
        frameworks=frameworks, questionnaires=questionnaires, rulesets=rulesets, raw=raw
    )
    for key in rulesets:
        catalog.compiled(key)  # compile now: rule errors surface at load time, with the rule id
    return catalog


def _resolved(paths: Iterable[Path]) -> list[tuple[Path, dict]]:
    """Each file's full document, a file that `extends` another version resolved against it
    (the base must be among the files, and may itself extend an older one)."""
    documents = [(path, read_yaml(path)) for path in paths]
    by_key = {f"{d.get('slug')}@{d.get('version')}": d for _, d in documents}
    resolved: dict[str, dict] = {}

    def full(key: str, chain: tuple[str, ...] = ()) -> dict:
        if key in chain:
            raise CatalogError(f"{key} extends itself through {' → '.join(chain)}")
        if key not in resolved:
            data = by_key[key]
            base_key = data.get("extends")
            if base_key is None:
                resolved[key] = data
            elif base_key not in by_key:
                raise CatalogError(f"{key} extends {base_key}, which is not in the catalogue")
            else:
                base = full(base_key, (*chain, key))
                resolved[key] = resolve_extension(data, base)
        return resolved[key]

    return [(path, full(f"{d.get('slug')}@{d.get('version')}")) for path, d in documents]


def check_answers_fit(
    ruleset: RulesetSpec, own: QuestionnaireSpec, other: QuestionnaireSpec
) -> None:
    """A ruleset compiled for `own` may score answers of `other` only when every question of
    `other` is in `own` with the same type and options (its answers then mean the same; the
    questions `other` lacks are blank)."""
    for question in other.iter_questions():
        mine = own.questions.get(question.code)
        if mine is None or mine.type != question.type or mine.option_codes != question.option_codes:
            raise CatalogError(
                f"{ruleset.key} applies to {other.key}, but question {question.code} is not the"
                f" same in {own.key}"
            )


@lru_cache(maxsize=1)
def builtin_catalog() -> Catalog:
    return load_catalog_files()
