"""Questionnaires as plain, immutable data: read from the YAML catalogue, no ORM.

Everything that validates or scores answers works on these objects, so the command line,
the API, the web forms and the Celery workers all share one definition of a questionnaire.
The database models in `questionnaires.models` mirror a published version for browsing and
foreign keys; the content hash keeps both in step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from packaging.version import InvalidVersion, Version

LANGUAGES = ("en", "zh-hant")
ANSWER_TYPES = ("yes_no", "choice", "multi_choice", "integer", "version", "date", "text", "file")
YES_NO_CODES = ("yes", "no", "unknown")
AUDIENCES = ("vendor", "buyer")
# How a file question's evidence is read (scoring.evidence.parse_evidence); startup_log by default.
FILE_PARSERS = ("startup_log", "model_config", "probe_result")
# Who supplies a file question's evidence: the respondent (default) or AVIA itself (e.g. the
# isolation probe's result), whose upload the vendor portal does not offer.
PRODUCERS = ("respondent", "avia")
CATALOG_DIR = Path(__file__).resolve().parent / "catalog"


class CatalogError(ValueError):
    """A catalogue file is malformed. The message names the file and the offending entry."""


@dataclass(frozen=True)
class Text:
    """A text in every supported language."""

    en: str
    zh_hant: str

    def get(self, language: str | None) -> str:
        if language and language.lower().startswith("zh"):
            return self.zh_hant or self.en
        return self.en

    def as_dict(self) -> dict[str, str]:
        return {"en": self.en, "zh-hant": self.zh_hant}


@dataclass(frozen=True)
class Option:
    code: str
    label: Text
    exclusive: bool = False


@dataclass(frozen=True)
class Question:
    code: str
    section: str
    type: str
    required: bool
    text: Text
    help: Text
    options: tuple[Option, ...] = ()
    unit: str | None = None
    unit_label: Text | None = None
    placeholder: Text | None = None
    blank_means: Text | None = None
    show_if: str | None = None
    parser: str | None = None  # file questions only: one of FILE_PARSERS
    produced_by: str = "respondent"  # file questions only: one of PRODUCERS
    # Framework reference ids the question cites (`references:`, as a rule's); the ids are
    # checked where the frameworks are known (an organization's upload), not by this parser.
    references: tuple[str, ...] = ()

    @property
    def produced_by_avia(self) -> bool:
        """Evidence AVIA produces (the probe result): never uploaded through the vendor portal."""
        return self.produced_by == "avia"

    @property
    def identifier(self) -> str:
        """The name a CEL condition uses for this question (`PRF-05` → `PRF_05`)."""
        return code_to_identifier(self.code)

    @property
    def option_codes(self) -> tuple[str, ...]:
        if self.type == "yes_no":
            return YES_NO_CODES
        return tuple(option.code for option in self.options)


@dataclass(frozen=True)
class Section:
    code: str
    answered_by: str
    title: Text
    intro: Text
    questions: tuple[Question, ...]

    @property
    def vendor_facing(self) -> bool:
        return self.answered_by == "vendor"


@dataclass(frozen=True)
class QuestionnaireSpec:
    slug: str
    version: str
    title: Text
    description: Text
    sections: tuple[Section, ...]
    content_hash: str
    questions: Mapping[str, Question] = field(repr=False, compare=False, hash=False)
    units: Mapping[str, Text] = field(default_factory=dict, repr=False, compare=False, hash=False)

    @property
    def key(self) -> str:
        """`slug@version`, as the API, the CLI and rulesets name a questionnaire."""
        return f"{self.slug}@{self.version}"

    def iter_questions(self) -> Iterator[Question]:
        for section in self.sections:
            yield from section.questions

    def section(self, code: str) -> Section:
        for section in self.sections:
            if section.code == code:
                return section
        raise KeyError(code)

    @property
    def probe_question(self) -> Question | None:
        """The file question that holds the isolation probe's result (produced by AVIA and
        read by the `probe_result` parser), if this questionnaire asks for one."""
        for question in self.iter_questions():
            if question.produced_by_avia and question.parser == "probe_result":
                return question
        return None


def english_only(content: Mapping[str, Any]) -> bool:
    """Whether a stored catalogue version is written in English only (an upload with texts
    that lack Chinese, docs/catalogue-format.md): pages and reports then say so rather than
    show a half translation."""
    return content.get("languages") == ["en"]


def version_key(version: str) -> tuple[int, Version | str]:
    """Sort key of catalogue versions ("1" < "1.1" < "2"): PEP 440 order, and a version that is
    not PEP 440 sorts before every one that is (by its text)."""
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def code_to_identifier(code: str) -> str:
    return code.replace("-", "_")


def content_hash(data: Any) -> str:
    """A stable hash of parsed catalogue content (key order and YAML layout do not matter)."""
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path.name}: cannot read YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise CatalogError(f"{path.name}: the top level must be a mapping")
    # Through JSON and back: what is stored in the database is exactly what was hashed (YAML
    # dates become ISO strings).
    return json.loads(json.dumps(data, default=str, ensure_ascii=False))


def resolve_extension(data: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """A new catalogue version written as "the base version plus": the full document.

    A file with ``extends: slug@version`` holds only what the new version adds (see
    docs/catalogue-format.md): its ``title``/``description``/``questionnaire`` replace the
    base's, ``units`` and ``derived`` add names, ``add_questions`` appends questions to existing
    sections, ``add_sections`` inserts sections (each ``before`` a base section, else at the end)
    and ``rules`` appends rules. The base stays untouched; what is published (and hashed) is the
    full result, so a stored version never depends on another.
    """
    source = f"{data.get('slug')}@{data.get('version')}"
    resolved = json.loads(json.dumps(base))  # a deep copy
    for key in ("slug", "version", "title", "description", "questionnaire", "applies_to"):
        if key in data:
            resolved[key] = data[key]
    resolved["extends"] = data["extends"]
    for key in ("units", "derived"):
        additions = data.get(key) or {}
        taken = set(resolved.get(key) or {}) & set(additions)
        if taken:
            raise CatalogError(f"{source}: {key} {', '.join(sorted(taken))} already in the base")
        if additions:
            resolved[key] = {**(resolved.get(key) or {}), **additions}
    sections = resolved.get("sections") or []
    by_code = {section.get("code"): section for section in sections}
    for code, questions in (data.get("add_questions") or {}).items():
        if code not in by_code:
            raise CatalogError(f"{source}: add_questions names unknown section {code}")
        by_code[code]["questions"] = [*(by_code[code].get("questions") or []), *questions]
    for section in data.get("add_sections") or []:
        section = dict(section)
        before = section.pop("before", None)
        codes = [s.get("code") for s in sections]
        if before is not None and before not in codes:
            raise CatalogError(
                f"{source}: add_sections puts {section.get('code')} before unknown {before}"
            )
        sections.insert(codes.index(before) if before is not None else len(sections), section)
    if sections:
        resolved["sections"] = sections
    if data.get("rules"):
        resolved["rules"] = [*(resolved.get("rules") or []), *data["rules"]]
    return resolved


def parse_text(value: Any, where: str, *, optional: bool = False) -> Text | None:
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        raise CatalogError(f"{where}: expected a mapping with 'en' and 'zh-hant'")
    english, chinese = value.get("en"), value.get("zh-hant")
    if not isinstance(english, str) or not english.strip():
        raise CatalogError(f"{where}: the English text is missing")
    if not isinstance(chinese, str) or not chinese.strip():
        raise CatalogError(f"{where}: the Traditional Chinese text is missing")
    return Text(en=english.strip(), zh_hant=chinese.strip())


def _require_text(value: Any, where: str) -> Text:
    text = parse_text(value, where)
    assert text is not None
    return text


def parse_questionnaire(
    data: Mapping[str, Any], *, source: str = "questionnaire"
) -> QuestionnaireSpec:
    """Build a questionnaire from parsed YAML, refusing anything the rest of AVIA cannot use."""
    slug, version = data.get("slug"), data.get("version")
    if not isinstance(slug, str) or not slug:
        raise CatalogError(f"{source}: 'slug' is required")
    if not isinstance(version, str | int) or str(version) == "":
        raise CatalogError(f"{source}: 'version' is required (quote it, e.g. \"1\")")
    units = data.get("units") or {}
    sections: list[Section] = []
    questions: dict[str, Question] = {}
    for raw_section in data.get("sections") or []:
        code = raw_section.get("code")
        where = f"{source}: section {code}"
        if not isinstance(code, str) or not code:
            raise CatalogError(f"{source}: a section has no code")
        if raw_section.get("answered_by") not in AUDIENCES:
            raise CatalogError(f"{where}: 'answered_by' must be one of {', '.join(AUDIENCES)}")
        section_questions = []
        for raw_question in raw_section.get("questions") or []:
            question = _parse_question(raw_question, code, units, source)
            if question.code in questions:
                raise CatalogError(f"{source}: question {question.code} appears twice")
            questions[question.code] = question
            section_questions.append(question)
        sections.append(
            Section(
                code=code,
                answered_by=raw_section["answered_by"],
                title=_require_text(raw_section.get("title"), f"{where} title"),
                intro=parse_text(raw_section.get("intro"), f"{where} intro", optional=True)
                or Text("", ""),
                questions=tuple(section_questions),
            )
        )
    if not questions:
        raise CatalogError(f"{source}: the questionnaire has no questions")
    return QuestionnaireSpec(
        slug=slug,
        version=str(version),
        title=_require_text(data.get("title"), f"{source} title"),
        description=parse_text(data.get("description"), f"{source} description", optional=True)
        or Text("", ""),
        sections=tuple(sections),
        content_hash=content_hash(data),
        questions=questions,
        units={
            code: _require_text(label, f"{source}: unit {code}") for code, label in units.items()
        },
    )


def _parse_question(
    raw: Mapping[str, Any], section: str, units: Mapping[str, Any], source: str
) -> Question:
    code = raw.get("code")
    if not isinstance(code, str) or not code:
        raise CatalogError(f"{source}: a question in section {section} has no code")
    where = f"{source}: question {code}"
    answer_type = raw.get("type")
    if answer_type not in ANSWER_TYPES:
        raise CatalogError(f"{where}: unknown type {answer_type!r}")
    options: list[Option] = []
    for raw_option in raw.get("options") or []:
        option_code = raw_option.get("code")
        options.append(
            Option(
                code=str(option_code),
                label=_require_text(raw_option.get("label"), f"{where} option {option_code}"),
                exclusive=bool(raw_option.get("exclusive", False)),
            )
        )
    if answer_type in ("choice", "multi_choice") and not options:
        raise CatalogError(f"{where}: a {answer_type} question needs options")
    if len({option.code for option in options}) != len(options):
        raise CatalogError(f"{where}: option codes must be unique")
    unit = raw.get("unit")
    unit_label = None
    if unit is not None:
        if unit not in units:
            raise CatalogError(f"{where}: unit {unit!r} is not defined under 'units'")
        unit_label = parse_text(units[unit], f"{source}: unit {unit}")
    show_if = raw.get("show_if")
    if show_if is not None and (not isinstance(show_if, str) or not show_if.strip()):
        raise CatalogError(f"{where}: 'show_if' must be a CEL expression")
    parser = raw.get("parser", "startup_log" if answer_type == "file" else None)
    produced_by = raw.get("produced_by", "respondent")
    if answer_type != "file" and ("parser" in raw or "produced_by" in raw):
        raise CatalogError(f"{where}: 'parser' and 'produced_by' are for file questions")
    if answer_type == "file" and parser not in FILE_PARSERS:
        raise CatalogError(f"{where}: 'parser' must be one of {', '.join(FILE_PARSERS)}")
    if produced_by not in PRODUCERS:
        raise CatalogError(f"{where}: 'produced_by' must be one of {', '.join(PRODUCERS)}")
    references = raw.get("references") or []
    if not isinstance(references, list) or not all(
        isinstance(ref, str) and ref for ref in references
    ):
        raise CatalogError(f"{where}: 'references' must list framework reference ids")
    return Question(
        code=code,
        section=section,
        type=answer_type,
        required=bool(raw.get("required", False)),
        text=_require_text(raw.get("text"), f"{where} text"),
        # Optional: an uploaded questionnaire (e.g. from a spreadsheet) may have no help text.
        help=parse_text(raw.get("help"), f"{where} help", optional=True) or Text("", ""),
        options=tuple(options),
        unit=unit,
        unit_label=unit_label,
        placeholder=parse_text(raw.get("placeholder"), f"{where} placeholder", optional=True),
        blank_means=parse_text(raw.get("blank_means"), f"{where} blank_means", optional=True),
        show_if=show_if.strip() if isinstance(show_if, str) else None,
        parser=parser,
        produced_by=produced_by,
        references=tuple(references),
    )


def load_questionnaire_file(path: Path) -> QuestionnaireSpec:
    return parse_questionnaire(read_yaml(path), source=path.name)


def builtin_questionnaire_files() -> list[Path]:
    return sorted(CATALOG_DIR.glob("*.yaml"))
