"""A catalogue uploaded by an organization: read, bounded and checked before anything is saved.

Uploaded content is hostile until checked. A document is read with YAML's safe loader (keeping
each entry's line, refusing anchors and aliases, which could expand a small file into a huge
one), its sizes are held to `questionnaires.bounds`, its texts to `core.text.text_errors`, its
conditions to a static cost bound (`questionnaires.conditions.condition_cost`), and then it is
parsed and compiled by the same code as the shipped catalogue (`parse_questionnaire`,
`parse_ruleset`, `CompiledRuleset`). Every problem is reported with the file, the line, the
code (question, option, section or rule) and what is wrong, in the reader's language.

The document's shape (docs/catalogue-format.md, "Uploading a catalogue"):

    questionnaire: {...}   # a questionnaire version, as in questionnaires/catalog/ (optional
                           # when the ruleset scores a questionnaire already published)
    ruleset: {...}         # a ruleset version, as in scoring/catalog/
    frameworks: [...]      # optional: the organization's own framework references

No ORM: the caller passes what the owner already has (`owned_questionnaires`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from django.utils.translation import gettext, gettext_noop

from core.errors import ServiceError
from core.text import shown_safely, text_errors
from questionnaires import bounds
from questionnaires.conditions import condition_cost
from questionnaires.spec import (
    ANSWER_TYPES,
    AUDIENCES,
    FILE_PARSERS,
    PRODUCERS,
    CatalogError,
    QuestionnaireSpec,
    parse_questionnaire,
    resolve_extension,
)

from .engine import CompiledRuleset
from .registry import check_answers_fit
from .spec import (
    SEVERITIES,
    FrameworkRef,
    RulesetSpec,
    RuleSpec,
    parse_frameworks,
    parse_ruleset,
)

# What the content of an English-only catalogue says about itself (`languages`), so pages and
# reports mark it instead of showing a half translation.
ENGLISH_ONLY = ["en"]
# Problems shown at most (a hostile file could have a million).
PROBLEMS_SHOWN = 50

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+-]*$")
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_TOP_LEVEL = ("questionnaire", "ruleset", "frameworks")
_QUESTIONNAIRE_KEYS = {
    "slug", "version", "extends", "title", "description", "units", "sections", "add_questions",
    "add_sections", "languages",
}  # fmt: skip
_SECTION_KEYS = {"code", "answered_by", "title", "intro", "questions", "before"}
_QUESTION_KEYS = {
    "code", "type", "required", "text", "help", "placeholder", "unit", "blank_means", "show_if",
    "parser", "produced_by", "options", "references",
}  # fmt: skip
_OPTION_KEYS = {"code", "label", "exclusive"}
_RULESET_KEYS = {
    "slug", "version", "extends", "questionnaire", "applies_to", "title", "description", "points",
    "derived", "rules", "languages", "frameworks",
}  # fmt: skip
_RULE_KEYS = {
    "id", "severity", "when", "fires_when_blank", "section", "title", "rationale", "remediation",
    "references",
}  # fmt: skip
_FRAMEWORK_KEYS = {"id", "jurisdiction", "family", "title", "confidence"}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class CatalogueProblem:
    """One thing wrong with an uploaded catalogue. `message` is an English msgid, translated
    with `params` when read, so the problem reads in the reader's language wherever it is
    shown; `detail` is what the CEL engine or the YAML reader said, quoted as is."""

    file: str
    message: str
    params: Mapping[str, Any] = field(default_factory=dict)
    code: str = ""  # the question, option, section or rule code, or the key
    line: int | None = None
    cell: str | None = None  # for spreadsheets: "B7"

    def text(self) -> str:
        return gettext(self.message) % dict(self.params) if self.params else gettext(self.message)

    def where(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(gettext("line %(line)s") % {"line": self.line})
        if self.cell:
            parts.append(gettext("cell %(cell)s") % {"cell": self.cell})
        if self.code:
            parts.append(self.code)
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"{self.where()}: {self.text()}"

    def as_dict(self) -> dict[str, Any]:
        """For the API and for tests: plain values in the active language."""
        return {
            "file": self.file,
            "line": self.line,
            "cell": self.cell,
            "code": self.code,
            "message": self.text(),
        }


class CatalogueInvalid(ServiceError):
    """An uploaded catalogue was refused; nothing was saved. `problems` says where and why."""

    def __init__(self, problems: Sequence[CatalogueProblem]) -> None:
        self.problems = list(problems[:PROBLEMS_SHOWN])
        if len(problems) > PROBLEMS_SHOWN:
            self.problems.append(
                CatalogueProblem(
                    problems[0].file,
                    gettext_noop("%(count)s more problems are not shown; fix these first."),
                    {"count": len(problems) - PROBLEMS_SHOWN},
                )
            )
        super().__init__({"document": self.problems})


@dataclass
class LineMap:
    """Where each entry of an uploaded file is: by path into the document (`("ruleset",
    "rules", 3)`), and by what it is and its code (`("rule", "R-1")`). A YAML file gives lines;
    a spreadsheet gives cells ("B7")."""

    by_path: dict[Path, int | str] = field(default_factory=dict)
    by_code: dict[tuple[str, str], list[int | str]] = field(default_factory=dict)

    def find(self, path: Path = (), code: tuple[str, str] | None = None) -> int | str | None:
        if code is not None and code in self.by_code:
            return self.by_code[code][0]
        while path:
            if path in self.by_path:
                return self.by_path[path]
            path = path[:-1]
        return None


@dataclass(frozen=True)
class CatalogueDocument:
    """A catalogue file read: its data and where each entry is."""

    data: Any
    source_name: str
    lines: LineMap = field(default_factory=LineMap)


@dataclass(frozen=True)
class CheckedCatalogue:
    """An uploaded catalogue that passed every check: what to save."""

    ruleset: RulesetSpec
    ruleset_content: dict[str, Any]
    compiled: CompiledRuleset
    # The new questionnaire version of the document, or None when the ruleset scores one the
    # owner already published (`ruleset.questionnaire`).
    questionnaire: QuestionnaireSpec | None
    questionnaire_content: dict[str, Any] | None
    english_only: bool
    # Texts without Chinese, when the catalogue is English only (for the preview's note).
    missing_chinese: int = 0


# -- reading -------------------------------------------------------------------------------


def read_catalogue_file(data: bytes, *, source_name: str) -> CatalogueDocument:
    """Read an uploaded YAML file (bounded, safe loader, no aliases), keeping each entry's
    line. Raises `CatalogueInvalid`."""
    if len(data) > bounds.CATALOGUE_FILE_BYTES_MAX:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is %(size)s bytes; the limit is %(limit)s bytes."),
                    {"size": len(data), "limit": bounds.CATALOGUE_FILE_BYTES_MAX},
                )
            ]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is not UTF-8 text (byte %(position)s)."),
                    {"position": exc.start},
                )
            ]
        ) from exc
    try:
        # libyaml's safe loader when the system has it (ten times faster), keeping line marks.
        safe_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        for count, event in enumerate(yaml.parse(text, Loader=safe_loader)):
            if count >= bounds.CATALOGUE_YAML_EVENTS_MAX:
                mark: Any = event.start_mark
                raise _TooManyEntries(mark.line + 1)
        loader = safe_loader(text)
        try:
            node = loader.get_single_node()
            lines = LineMap()
            if node is not None:
                _record_lines(node, (), lines, set())
            loaded = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _TooManyEntries as too_many:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop(
                        "The file has more than %(limit)s entries (reached at this line): far"
                        " more than a questionnaire needs. Split it, or remove what is repeated."
                    ),
                    {"limit": bounds.CATALOGUE_YAML_EVENTS_MAX},
                    line=too_many.line,
                )
            ]
        ) from None
    except _AliasFound as alias:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("Anchors and aliases (& and *) are not accepted in an upload."),
                    line=alias.line,
                )
            ]
        ) from None
    except RecursionError:
        raise CatalogueInvalid(
            [CatalogueProblem(source_name, gettext_noop("The file nests entries too deeply."))]
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is not valid YAML: %(detail)s."),
                    {"detail": shown_safely(exc.problem or exc.context or "", 200)},
                    line=mark.line + 1 if mark else None,
                )
            ]
        ) from exc
    except yaml.YAMLError as exc:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is not valid YAML: %(detail)s."),
                    {"detail": shown_safely(exc, 200)},
                )
            ]
        ) from exc
    # Through JSON and back, as the shipped catalogue is read: what is stored is what is hashed
    # (YAML dates become ISO strings).
    plain = json.loads(json.dumps(loaded, default=str, ensure_ascii=False))
    return CatalogueDocument(data=plain, source_name=source_name, lines=lines)


class _AliasFound(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


class _TooManyEntries(_AliasFound):
    pass


def _record_lines(node: yaml.Node, path: Path, lines: LineMap, seen: set[int]) -> None:
    """Record where each entry is; a node met twice is an alias (`*name`), refused: a few
    aliases of aliases expand a small file into billions of entries ("billion laughs")."""
    if id(node) in seen:
        raise _AliasFound(node.start_mark.line + 1)
    seen.add(id(node))
    lines.by_path[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        keys = [k.value if isinstance(k, yaml.ScalarNode) else "?" for k, _v in node.value]
        named = "code" in keys or "id" in keys
        for key, (_key_node, value_node) in zip(keys, node.value, strict=True):
            if named and key in ("code", "id") and isinstance(value_node, yaml.ScalarNode):
                kind = _kind_of(path)
                code = value_node.value
                lines.by_code.setdefault((kind, code), []).append(node.start_mark.line + 1)
                # Each entry's fields too (`("rule", "R-1.when")`): the line of a condition.
                for other, (_k, other_node) in zip(keys, node.value, strict=True):
                    lines.by_code.setdefault((kind, f"{code}.{other}"), []).append(
                        other_node.start_mark.line + 1
                    )
            _record_lines(value_node, (*path, key), lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, (*path, index), lines, seen)


def _kind_of(path: Path) -> str:
    """What an entry with a `code` or `id` is, from where it sits."""
    named = [part for part in path if isinstance(part, str)]
    last = named[-1] if named else ""
    return {
        "sections": "section",
        "add_sections": "section",
        "questions": "question",
        "options": "option",
        "rules": "rule",
        "frameworks": "framework",
    }.get(last, "question" if last in ("add_questions",) or len(named) >= 2 else last)


# -- checking --------------------------------------------------------------------------------


class _Problems:
    def __init__(self, document: CatalogueDocument) -> None:
        self.document = document
        self.found: list[CatalogueProblem] = []

    def add(
        self,
        message: str,
        params: Mapping[str, Any] | None = None,
        *,
        path: Path = (),
        code: str = "",
        kind: str = "",
        field: str = "",
    ) -> None:
        lines = self.document.lines
        found = None
        if kind and code and field:
            found = lines.find((), (kind, f"{code}.{field}"))
        if found is None:
            found = lines.find(path, (kind, code) if kind and code else None)
        self.found.append(
            CatalogueProblem(
                self.document.source_name,
                message,
                params or {},
                code,
                line=found if isinstance(found, int) else None,
                cell=found if isinstance(found, str) else None,
            )
        )

    def raise_if_any(self) -> None:
        if self.found:
            raise CatalogueInvalid(self.found)


def check_catalogue_document(
    document: CatalogueDocument,
    *,
    shipped_frameworks: Mapping[str, FrameworkRef],
    owned_questionnaires: Mapping[str, Mapping[str, Any]],
) -> CheckedCatalogue:
    """Check an uploaded catalogue whole; raise `CatalogueInvalid` listing every problem found.

    `owned_questionnaires`: the content of the owner's published questionnaire versions by
    `slug@version` (a ruleset may score one of them, a new version may `extends` one)."""
    problems = _Problems(document)
    data = document.data
    if not isinstance(data, dict):
        problems.add(gettext_noop("The file must be a mapping with 'questionnaire' and 'ruleset'."))
        problems.raise_if_any()
    for key in data:
        if key not in _TOP_LEVEL:
            problems.add(
                gettext_noop("Unknown key “%(key)s”; expected %(expected)s."),
                {"key": shown_safely(key), "expected": ", ".join(_TOP_LEVEL)},
                path=(key,),
                code=str(key),
            )
    if not isinstance(data.get("ruleset"), dict):
        problems.add(gettext_noop("The file needs a 'ruleset' (a mapping)."), path=("ruleset",))
    problems.raise_if_any()
    texts = _Texts()
    raw_questionnaire = data.get("questionnaire")
    questionnaire_content: dict[str, Any] | None = None
    if raw_questionnaire is not None:
        questionnaire_content = _check_questionnaire(
            raw_questionnaire, problems, texts, owned_questionnaires
        )
    own_frameworks = _check_frameworks(data.get("frameworks"), problems, texts)
    ruleset_content = _check_ruleset(data["ruleset"], problems, texts)
    problems.raise_if_any()
    assert ruleset_content is not None
    english_only = texts.missing_chinese > 0
    if english_only:
        texts.english_everywhere()
        if questionnaire_content is not None:
            questionnaire_content["languages"] = list(ENGLISH_ONLY)
        ruleset_content["languages"] = list(ENGLISH_ONLY)
    if own_frameworks:
        ruleset_content["frameworks"] = own_frameworks
    return _compile(
        document,
        problems,
        questionnaire_content,
        ruleset_content,
        shipped_frameworks,
        owned_questionnaires,
        english_only,
        texts.missing_chinese if english_only else 0,
    )


class _Texts:
    """Every bilingual text of the document, to make it English only when any lacks Chinese."""

    def __init__(self) -> None:
        self.entries: list[dict[str, str]] = []
        self.missing_chinese = 0

    def english_everywhere(self) -> None:
        for entry in self.entries:
            entry["zh-hant"] = entry["en"]


def _check_text(
    value: Any,
    path: Path,
    problems: _Problems,
    texts: _Texts,
    *,
    code: str,
    limit: int = bounds.CATALOGUE_TEXT_CHARS_MAX,
    required: bool = True,
) -> dict[str, str] | None:
    """A text: `{en: ..., zh-hant: ...}` (Chinese optional) or plain English text."""
    name = str(path[-1])
    if value is None:
        if required:
            problems.add(
                gettext_noop("'%(field)s' is required."), {"field": name}, path=path, code=code
            )
        return None
    if isinstance(value, str):
        value = {"en": value}
    if not isinstance(value, dict) or set(value) - {"en", "zh-hant"}:
        problems.add(
            gettext_noop("'%(field)s' must be text, or a mapping with 'en' and 'zh-hant'."),
            {"field": name},
            path=path,
            code=code,
        )
        return None
    result: dict[str, str] = {}
    for language in ("en", "zh-hant"):
        text = value.get(language)
        if text is None or (isinstance(text, str) and not text.strip()):
            if language == "en":
                problems.add(
                    gettext_noop("'%(field)s' has no English text."),
                    {"field": name},
                    path=path,
                    code=code,
                )
            continue
        errors = text_errors(text, max_length=limit)
        if errors:
            problems.add(
                gettext_noop("'%(field)s' (%(language)s): %(problem)s"),
                {"field": name, "language": language, "problem": " ".join(errors)},
                path=(*path, language),
                code=code,
            )
            continue
        result[language] = text.strip()
    if "en" not in result:
        return None
    if "zh-hant" not in result:
        texts.missing_chinese += 1
        result["zh-hant"] = ""
    texts.entries.append(result)
    return result


def _check_string(
    value: Any,
    path: Path,
    problems: _Problems,
    *,
    code: str = "",
    pattern: re.Pattern[str] | None = None,
    limit: int,
    required: bool = True,
    what: str = "",
) -> str | None:
    name = str(path[-1])
    if value is None:
        if required:
            problems.add(
                gettext_noop("'%(field)s' is required."), {"field": name}, path=path, code=code
            )
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        problems.add(
            gettext_noop("'%(field)s' must be text."), {"field": name}, path=path, code=code
        )
        return None
    value = value.strip()
    if len(value) > limit:
        problems.add(
            gettext_noop("'%(field)s' is %(length)s characters long; the limit is %(limit)s."),
            {"field": name, "length": len(value), "limit": limit},
            path=path,
            code=code,
        )
        return None
    if errors := text_errors(value):
        problems.add(
            gettext_noop("'%(field)s': %(problem)s"),
            {"field": name, "problem": " ".join(errors)},
            path=path,
            code=code,
        )
        return None
    if pattern is not None and not pattern.match(value):
        problems.add(
            gettext_noop("'%(field)s' “%(value)s” is not valid: %(what)s."),
            {"field": name, "value": shown_safely(value), "what": gettext(what)},
            path=path,
            code=code,
        )
        return None
    return value


def _check_choice(
    value: Any, choices: Sequence[str], path: Path, problems: _Problems, *, code: str
) -> None:
    if value not in choices:
        problems.add(
            gettext_noop("'%(field)s' must be one of %(choices)s, not “%(value)s”."),
            {"field": path[-1], "choices": ", ".join(choices), "value": shown_safely(value)},
            path=path,
            code=code,
        )


def _check_keys(
    raw: Mapping[str, Any], allowed: set[str], path: Path, problems: _Problems, *, code: str
) -> None:
    for key in raw:
        if key not in allowed:
            problems.add(
                gettext_noop("Unknown key “%(key)s”."),
                {"key": shown_safely(key)},
                path=(*path, str(key)),
                code=code,
            )


def _check_count(
    items: Any, limit: int, what: str, path: Path, problems: _Problems, *, code: str = ""
) -> list[Any]:
    """A list of at most `limit` entries (else one problem, and nothing of it is read)."""
    if items is None:
        return []
    if not isinstance(items, list):
        problems.add(
            gettext_noop("'%(field)s' must be a list."), {"field": path[-1]}, path=path, code=code
        )
        return []
    if len(items) > limit:
        problems.add(
            gettext_noop("There are %(count)s %(what)s; the limit is %(limit)s."),
            {"count": len(items), "what": gettext(what), "limit": limit},
            path=path,
            code=code,
        )
        return []
    return items


def _check_condition(
    expression: Any, path: Path, problems: _Problems, *, code: str, kind: str
) -> None:
    if not isinstance(expression, str) or not expression.strip():
        problems.add(
            gettext_noop("'%(field)s' must be a CEL condition."),
            {"field": path[-1]},
            path=path,
            code=code,
        )
        return
    cost = condition_cost(expression)

    def add(message: str, params: Mapping[str, Any] | None = None) -> None:
        problems.add(message, params, path=path, code=code, kind=kind, field=str(path[-1]))

    if cost.length > bounds.CONDITION_CHARS_MAX:
        add(
            gettext_noop("The condition is %(length)s characters long; the limit is %(limit)s."),
            {"length": cost.length, "limit": bounds.CONDITION_CHARS_MAX},
        )
    elif cost.nesting > bounds.CONDITION_NESTING_MAX:
        add(
            gettext_noop("The condition nests %(depth)s brackets deep; the limit is %(limit)s."),
            {"depth": cost.nesting, "limit": bounds.CONDITION_NESTING_MAX},
        )
    elif cost.comprehensions > bounds.CONDITION_COMPREHENSIONS_MAX:
        add(
            gettext_noop(
                "The condition has %(count)s comprehensions (exists, all, map, filter); the"
                " limit is %(limit)s."
            ),
            {"count": cost.comprehensions, "limit": bounds.CONDITION_COMPREHENSIONS_MAX},
        )
    elif cost.nested_comprehension:
        add(
            gettext_noop(
                "The condition has a comprehension (exists, all, map, filter) inside another:"
                " its cost would grow with the product of the lists. Write it without nesting."
            ),
        )
    else:
        errors = text_errors(expression)
        if errors:
            add(
                gettext_noop("'%(field)s': %(problem)s"),
                {"field": path[-1], "problem": " ".join(errors)},
            )


def _unique(
    codes: list[tuple[str, Path]], what: str, problems: _Problems, *, key: Callable[[str], str]
) -> None:
    seen: set[str] = set()
    for code, path in codes:
        if key(code) in seen:
            problems.add(
                gettext_noop("The %(what)s “%(code)s” appears twice."),
                {"what": gettext(what), "code": code},
                path=path,
                code=code,
            )
        seen.add(key(code))


def _check_questionnaire(
    raw: Any,
    problems: _Problems,
    texts: _Texts,
    owned: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any] | None:
    path: Path = ("questionnaire",)
    if not isinstance(raw, dict):
        problems.add(gettext_noop("'questionnaire' must be a mapping."), path=path)
        return None
    _check_keys(raw, _QUESTIONNAIRE_KEYS - {"languages"}, path, problems, code="questionnaire")
    content = dict(raw)
    content["slug"] = _check_string(
        raw.get("slug"),
        (*path, "slug"),
        problems,
        pattern=_SLUG,
        limit=bounds.CATALOGUE_SLUG_CHARS_MAX,
        what=gettext_noop("lowercase letters, digits and single hyphens"),
    )
    content["version"] = _check_string(
        raw.get("version"),
        (*path, "version"),
        problems,
        pattern=_VERSION,
        limit=bounds.CATALOGUE_VERSION_CHARS_MAX,
        what=gettext_noop("letters, digits, dots, + and -"),
    )
    base_key = raw.get("extends")
    if base_key is not None:
        if base_key not in owned:
            problems.add(
                gettext_noop(
                    "'extends' names %(key)s, which is not a published questionnaire of your"
                    " organization."
                ),
                {"key": shown_safely(base_key)},
                path=(*path, "extends"),
            )
            return None
        if isinstance(raw.get("sections"), list):
            problems.add(
                gettext_noop(
                    "A version that 'extends' another lists only 'add_sections' and 'add_questions'."
                ),
                path=(*path, "sections"),
            )
            return None
        try:
            content = resolve_extension(content, owned[base_key])
        except (CatalogError, AttributeError, TypeError) as exc:
            problems.add(
                gettext_noop("'extends' cannot be applied: %(detail)s."),
                {"detail": shown_safely(exc, 200)},
                path=(*path, "extends"),
            )
            return None
    content.pop("languages", None)
    content["title"] = _check_text(
        content.get("title"), (*path, "title"), problems, texts, code="questionnaire",
        limit=bounds.CATALOGUE_LABEL_CHARS_MAX,
    )  # fmt: skip
    description = _check_text(
        content.get("description"), (*path, "description"), problems, texts, code="questionnaire",
        required=False,
    )  # fmt: skip
    if description is not None:
        content["description"] = description
    units = content.get("units") or {}
    if not isinstance(units, dict):
        problems.add(gettext_noop("'units' must be a mapping."), path=(*path, "units"))
        units = {}
    content["units"] = {
        str(name): _check_text(
            label, (*path, "units", str(name)), problems, texts, code=str(name),
            limit=bounds.CATALOGUE_LABEL_CHARS_MAX,
        )
        for name, label in units.items()
    }  # fmt: skip
    if not content["units"]:
        content.pop("units")
    sections = _check_count(
        content.get("sections"), bounds.CATALOGUE_SECTIONS_MAX, gettext_noop("sections"),
        (*path, "sections"), problems,
    )  # fmt: skip
    section_codes: list[tuple[str, Path]] = []
    question_codes: list[tuple[str, Path]] = []
    checked_sections = []
    total_questions = sum(len(s.get("questions") or []) for s in sections if isinstance(s, dict))
    if total_questions > bounds.CATALOGUE_QUESTIONS_MAX:
        problems.add(
            gettext_noop("There are %(count)s %(what)s; the limit is %(limit)s."),
            {
                "count": total_questions,
                "what": gettext(gettext_noop("questions")),
                "limit": bounds.CATALOGUE_QUESTIONS_MAX,
            },
            path=(*path, "sections"),
        )
        return None
    for index, section in enumerate(sections):
        section_path: Path = (*path, "sections", index)
        checked = _check_section(section, section_path, problems, texts, set(units), question_codes)
        if checked is not None:
            section_codes.append((checked["code"], section_path))
            checked_sections.append(checked)
    if not question_codes and not problems.found:
        problems.add(gettext_noop("The questionnaire has no questions."), path=(*path, "sections"))
    _unique(section_codes, gettext_noop("section code"), problems, key=str)
    # Conditions name a question by its code with "-" as "_": PRF-05 and PRF_05 would clash.
    _unique(
        question_codes, gettext_noop("question code"), problems, key=lambda c: c.replace("-", "_")
    )
    content["sections"] = checked_sections
    for key in ("add_sections", "add_questions"):
        content.pop(key, None)
    return content


def _entry_code(raw: Any, path: Path, problems: _Problems, not_a_mapping: str) -> str | None:
    """The code of a section or question entry (None, with a problem, when it has none)."""
    if not isinstance(raw, dict):
        problems.add(not_a_mapping, path=path)
        return None
    return _check_string(
        raw.get("code"), (*path, "code"), problems, pattern=_CODE,
        limit=bounds.CATALOGUE_CODE_CHARS_MAX, what=gettext_noop("a letter, then letters, digits, - or _"),
    )  # fmt: skip


def _check_section(
    raw: Any,
    path: Path,
    problems: _Problems,
    texts: _Texts,
    units: set[str],
    question_codes: list[tuple[str, Path]],
) -> dict[str, Any] | None:
    code = _entry_code(raw, path, problems, gettext_noop("A section must be a mapping."))
    if code is None:
        return None
    _check_keys(raw, _SECTION_KEYS - {"before"}, path, problems, code=code)
    _check_choice(raw.get("answered_by"), AUDIENCES, (*path, "answered_by"), problems, code=code)
    content: dict[str, Any] = {"code": code, "answered_by": raw.get("answered_by")}
    content["title"] = _check_text(
        raw.get("title"), (*path, "title"), problems, texts, code=code,
        limit=bounds.CATALOGUE_LABEL_CHARS_MAX,
    )  # fmt: skip
    intro = _check_text(raw.get("intro"), (*path, "intro"), problems, texts, code=code,
                        required=False)  # fmt: skip
    if intro is not None:
        content["intro"] = intro
    questions = []
    raw_questions = raw.get("questions")
    if not isinstance(raw_questions, list):
        problems.add(gettext_noop("'%(field)s' must be a list."), {"field": "questions"}, path=path,
                     code=code)  # fmt: skip
        raw_questions = []
    for index, question in enumerate(raw_questions):
        question_path: Path = (*path, "questions", index)
        checked = _check_question(question, question_path, problems, texts, units)
        if checked is not None:
            question_codes.append((checked["code"], question_path))
            questions.append(checked)
    content["questions"] = questions
    return content


def _check_question(
    raw: Any, path: Path, problems: _Problems, texts: _Texts, units: set[str]
) -> dict[str, Any] | None:
    code = _entry_code(raw, path, problems, gettext_noop("A question must be a mapping."))
    if code is None:
        return None
    _check_keys(raw, _QUESTION_KEYS, path, problems, code=code)
    answer_type = raw.get("type")
    _check_choice(answer_type, ANSWER_TYPES, (*path, "type"), problems, code=code)
    content: dict[str, Any] = {key: raw[key] for key in raw if key in _QUESTION_KEYS}
    content["code"] = code
    if "required" in raw and not isinstance(raw["required"], bool):
        problems.add(gettext_noop("'%(field)s' must be true or false."), {"field": "required"},
                     path=(*path, "required"), code=code)  # fmt: skip
    for name, limit, required in (
        ("text", bounds.CATALOGUE_TEXT_CHARS_MAX, True),
        ("help", bounds.CATALOGUE_TEXT_CHARS_MAX, False),
        ("placeholder", bounds.CATALOGUE_LABEL_CHARS_MAX, False),
        ("blank_means", bounds.CATALOGUE_LABEL_CHARS_MAX, False),
    ):
        checked = _check_text(raw.get(name), (*path, name), problems, texts, code=code,
                              limit=limit, required=required)  # fmt: skip
        if checked is not None:
            content[name] = checked
    references = raw.get("references")
    if references is not None and (
        not isinstance(references, list)
        or len(references) > bounds.CATALOGUE_REFERENCES_MAX
        or not all(isinstance(ref, str) and ref for ref in references)
    ):
        problems.add(
            gettext_noop("'references' must list at most %(limit)s framework reference ids."),
            {"limit": bounds.CATALOGUE_REFERENCES_MAX},
            path=(*path, "references"),
            code=code,
        )
    if raw.get("unit") is not None and raw.get("unit") not in units:
        problems.add(
            gettext_noop("Unit “%(unit)s” is not defined under 'units'."),
            {"unit": shown_safely(raw.get("unit"))},
            path=(*path, "unit"),
            code=code,
        )
    if raw.get("show_if") is not None:
        _check_condition(raw["show_if"], (*path, "show_if"), problems, code=code, kind="question")
    if answer_type == "file":
        if "parser" in raw:
            _check_choice(raw["parser"], FILE_PARSERS, (*path, "parser"), problems, code=code)
        if "produced_by" in raw:
            _check_choice(raw["produced_by"], PRODUCERS, (*path, "produced_by"), problems,
                          code=code)  # fmt: skip
    elif "parser" in raw or "produced_by" in raw:
        problems.add(gettext_noop("'parser' and 'produced_by' are for file questions."), path=path,
                     code=code)  # fmt: skip
    options = _check_count(
        raw.get("options"), bounds.CATALOGUE_OPTIONS_MAX, gettext_noop("options"), (*path, "options"),
        problems, code=code,
    )  # fmt: skip
    if answer_type in ("choice", "multi_choice") and not options and "options" not in raw:
        problems.add(gettext_noop("A %(type)s question needs options."), {"type": answer_type},
                     path=path, code=code)  # fmt: skip
    if options and answer_type not in ("choice", "multi_choice"):
        problems.add(gettext_noop("Only choice and multi_choice questions have options."),
                     path=(*path, "options"), code=code)  # fmt: skip
    checked_options = []
    option_codes: list[tuple[str, Path]] = []
    for index, option in enumerate(options):
        option_path: Path = (*path, "options", index)
        if not isinstance(option, dict):
            problems.add(gettext_noop("An option must be a mapping."), path=option_path, code=code)
            continue
        option_code = _check_string(
            option.get("code"), (*option_path, "code"), problems, code=code,
            limit=bounds.CATALOGUE_ID_CHARS_MAX,
        )  # fmt: skip
        if option_code is None:
            continue
        where = f"{code} {option_code}"
        _check_keys(option, _OPTION_KEYS, option_path, problems, code=where)
        label = _check_text(option.get("label"), (*option_path, "label"), problems, texts,
                            code=where, limit=bounds.CATALOGUE_LABEL_CHARS_MAX)  # fmt: skip
        option_codes.append((option_code, option_path))
        checked_options.append(
            {"code": option_code, "label": label, "exclusive": bool(option.get("exclusive"))}
        )
    _unique(option_codes, gettext_noop("option code"), problems, key=str)
    if checked_options:
        content["options"] = checked_options
    return content


def _check_frameworks(raw: Any, problems: _Problems, texts: _Texts) -> list[dict[str, Any]]:
    path: Path = ("frameworks",)
    entries = _check_count(raw, bounds.CATALOGUE_FRAMEWORKS_MAX, gettext_noop("framework references"),
                           path, problems)  # fmt: skip
    checked = []
    ids: list[tuple[str, Path]] = []
    for index, entry in enumerate(entries):
        entry_path: Path = (*path, index)
        if not isinstance(entry, dict):
            problems.add(gettext_noop("A framework reference must be a mapping."), path=entry_path)
            continue
        ref_id = _check_string(entry.get("id"), (*entry_path, "id"), problems,
                               limit=bounds.CATALOGUE_ID_CHARS_MAX)  # fmt: skip
        if ref_id is None:
            continue
        _check_keys(entry, _FRAMEWORK_KEYS, entry_path, problems, code=ref_id)
        _check_choice(entry.get("jurisdiction"), ("hk", "international"),
                      (*entry_path, "jurisdiction"), problems, code=ref_id)  # fmt: skip
        _check_choice(entry.get("confidence"), ("V", "S"), (*entry_path, "confidence"),
                      problems, code=ref_id)  # fmt: skip
        family = _check_text(entry.get("family"), (*entry_path, "family"), problems, texts,
                             code=ref_id, limit=bounds.CATALOGUE_LABEL_CHARS_MAX)  # fmt: skip
        title = _check_text(entry.get("title"), (*entry_path, "title"), problems, texts,
                            code=ref_id)  # fmt: skip
        ids.append((ref_id, entry_path))
        checked.append({**entry, "id": ref_id, "family": family, "title": title})
    _unique(ids, gettext_noop("framework reference"), problems, key=str)
    return checked


def _check_ruleset(raw: Any, problems: _Problems, texts: _Texts) -> dict[str, Any] | None:
    path: Path = ("ruleset",)
    _check_keys(raw, _RULESET_KEYS - {"languages", "frameworks", "extends"}, path, problems,
                code="ruleset")  # fmt: skip
    content = dict(raw)
    content.pop("languages", None)
    content["slug"] = _check_string(
        raw.get("slug"), (*path, "slug"), problems, pattern=_SLUG,
        limit=bounds.CATALOGUE_SLUG_CHARS_MAX,
        what=gettext_noop("lowercase letters, digits and single hyphens"),
    )  # fmt: skip
    content["version"] = _check_string(
        raw.get("version"), (*path, "version"), problems, pattern=_VERSION,
        limit=bounds.CATALOGUE_VERSION_CHARS_MAX, what=gettext_noop("letters, digits, dots, + and -"),
    )  # fmt: skip
    content["title"] = _check_text(raw.get("title"), (*path, "title"), problems, texts,
                                   code="ruleset", limit=bounds.CATALOGUE_LABEL_CHARS_MAX)  # fmt: skip
    description = _check_text(raw.get("description"), (*path, "description"), problems, texts,
                              code="ruleset", required=False)  # fmt: skip
    if description is not None:
        content["description"] = description
    points = raw.get("points")
    if (
        not isinstance(points, dict)
        or set(points) != set(SEVERITIES)
        or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100
            for v in points.values()
        )
    ):
        problems.add(
            gettext_noop(
                "'points' must give a whole number from 0 to 100 for each of %(severities)s."
            ),
            {"severities": ", ".join(SEVERITIES)},
            path=(*path, "points"),
        )
    derived = raw.get("derived") or {}
    if not isinstance(derived, dict) or len(derived) > bounds.CATALOGUE_DERIVED_MAX:
        problems.add(
            gettext_noop("'derived' must map at most %(limit)s names to CEL expressions."),
            {"limit": bounds.CATALOGUE_DERIVED_MAX},
            path=(*path, "derived"),
        )
    else:
        for name, entry in derived.items():
            expression = entry.get("expression") if isinstance(entry, dict) else entry
            _check_condition(expression, (*path, "derived", str(name)), problems,
                             code=str(name), kind="derived")  # fmt: skip
    rules = _check_count(raw.get("rules"), bounds.CATALOGUE_RULES_MAX, gettext_noop("rules"),
                         (*path, "rules"), problems)  # fmt: skip
    if not rules and not problems.found:
        problems.add(gettext_noop("The ruleset has no rules."), path=(*path, "rules"))
    rule_ids: list[tuple[str, Path]] = []
    checked_rules = []
    for index, rule in enumerate(rules):
        rule_path: Path = (*path, "rules", index)
        checked = _check_rule(rule, rule_path, problems, texts)
        if checked is not None:
            rule_ids.append((checked["id"], rule_path))
            checked_rules.append(checked)
    _unique(rule_ids, gettext_noop("rule id"), problems, key=str)
    content["rules"] = checked_rules
    return content


def _check_rule(raw: Any, path: Path, problems: _Problems, texts: _Texts) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        problems.add(gettext_noop("A rule must be a mapping."), path=path)
        return None
    rule_id = _check_string(raw.get("id"), (*path, "id"), problems, pattern=_CODE,
                            limit=bounds.CATALOGUE_ID_CHARS_MAX,
                            what=gettext_noop("a letter, then letters, digits, - or _"))  # fmt: skip
    if rule_id is None:
        return None
    _check_keys(raw, _RULE_KEYS, path, problems, code=rule_id)
    _check_choice(raw.get("severity"), SEVERITIES, (*path, "severity"), problems, code=rule_id)
    _check_condition(raw.get("when"), (*path, "when"), problems, code=rule_id, kind="rule")
    content = dict(raw)
    content["id"] = rule_id
    for name in ("title", "rationale", "remediation"):
        content[name] = _check_text(
            raw.get(name), (*path, name), problems, texts, code=rule_id,
            limit=bounds.CATALOGUE_LABEL_CHARS_MAX if name == "title" else
            bounds.CATALOGUE_TEXT_CHARS_MAX,
        )  # fmt: skip
    references = raw.get("references") or []
    if not isinstance(references, list) or len(references) > bounds.CATALOGUE_REFERENCES_MAX:
        problems.add(
            gettext_noop("'references' must list at most %(limit)s framework reference ids."),
            {"limit": bounds.CATALOGUE_REFERENCES_MAX},
            path=(*path, "references"),
            code=rule_id,
        )
    for name in ("fires_when_blank",):
        value = raw.get(name) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.add(gettext_noop("'%(field)s' must be a list."), {"field": name},
                         path=(*path, name), code=rule_id)  # fmt: skip
    return content


# -- compiling: the same parser and engine as the shipped catalogue --------------------------


def _compile(
    document: CatalogueDocument,
    problems: _Problems,
    questionnaire_content: dict[str, Any] | None,
    ruleset_content: dict[str, Any],
    shipped_frameworks: Mapping[str, FrameworkRef],
    owned: Mapping[str, Mapping[str, Any]],
    english_only: bool,
    missing_chinese: int,
) -> CheckedCatalogue:
    questionnaire: QuestionnaireSpec | None = None
    questionnaires: dict[str, QuestionnaireSpec] = {}
    if questionnaire_content is not None:
        try:
            questionnaire = parse_questionnaire(questionnaire_content, source="questionnaire")
        except CatalogError as exc:
            _engine_problem(problems, exc, "questionnaire")
            problems.raise_if_any()
        assert questionnaire is not None
        if questionnaire.key in owned:
            problems.add(
                gettext_noop(
                    "%(key)s is published and never changes; raise 'version' for a new one."
                ),
                {"key": questionnaire.key},
                path=("questionnaire", "version"),
            )
            problems.raise_if_any()
        questionnaires[questionnaire.key] = questionnaire
    target = ruleset_content.get("questionnaire")
    if target is None and questionnaire is not None:
        target = ruleset_content["questionnaire"] = questionnaire.key
    target = str(target)
    frameworks: dict[str, FrameworkRef] = dict(shipped_frameworks)
    own = ruleset_content.get("frameworks") or []
    if own:
        clash = [entry["id"] for entry in own if entry["id"] in shipped_frameworks]
        for ref_id in clash:
            problems.add(
                gettext_noop(
                    "Framework reference %(id)s is already in the shipped list; use another id."
                ),
                {"id": ref_id},
                kind="framework",
                code=ref_id,
            )
        problems.raise_if_any()
        frameworks.update(parse_frameworks({"frameworks": own}, source="frameworks"))
    cited = [
        ("rule", rule["id"], rule.get("references") or []) for rule in ruleset_content["rules"]
    ]
    if questionnaire is not None:  # a question may cite clauses too (`references`)
        cited += [("question", q.code, q.references) for q in questionnaire.iter_questions()]
    for kind, code, references in cited:
        for ref in references:
            if ref not in frameworks:
                problems.add(
                    gettext_noop(
                        "Framework reference “%(id)s” is neither a shipped one nor listed under"
                        " 'frameworks'."
                    ),
                    {"id": shown_safely(ref)},
                    kind=kind,
                    code=code,
                    field="references",
                )
    applies_to = ruleset_content.get("applies_to") or []
    for key in [target, *applies_to]:
        if not isinstance(key, str) or (key not in questionnaires and key not in owned):
            problems.add(
                gettext_noop(
                    "The ruleset scores %(key)s, which is neither the questionnaire of this file"
                    " nor a published questionnaire of your organization."
                ),
                {"key": shown_safely(key)},
                path=("ruleset", "questionnaire" if key == target else "applies_to"),
            )
    problems.raise_if_any()
    for key in [target, *applies_to]:
        if key not in questionnaires:
            questionnaires[key] = parse_questionnaire(owned[key], source=key)
    try:
        ruleset = parse_ruleset(ruleset_content, frameworks, source="ruleset")
        for key in applies_to:
            check_answers_fit(ruleset, questionnaires[target], questionnaires[key])
    except CatalogError as exc:
        _engine_problem(problems, exc, "ruleset")
        problems.raise_if_any()
    compiled = _compile_rules(problems, ruleset, questionnaires[target])
    return CheckedCatalogue(
        ruleset=ruleset,
        ruleset_content=ruleset_content,
        compiled=compiled,
        questionnaire=questionnaire,
        questionnaire_content=questionnaire_content,
        english_only=english_only,
        missing_chinese=missing_chinese,
    )


def _compile_rules(
    problems: _Problems, ruleset: RulesetSpec, questionnaire: QuestionnaireSpec
) -> CompiledRuleset:
    """Compile; on an error, name every failing rule (`CompiledRuleset.lint`, the checks
    compiling makes, for each rule). The type checks share `CATALOGUE_CONDITION_CHECKS` tries
    among the conditions."""
    conditions = len(ruleset.rules) + len(ruleset.derived)
    conditions += sum(1 for q in questionnaire.iter_questions() if q.show_if)
    limit = max(bounds.CONDITION_CHECKS_MIN, bounds.CATALOGUE_CONDITION_CHECKS // conditions)

    def compiled(rules: tuple[RuleSpec, ...]) -> CompiledRuleset:
        return CompiledRuleset(replace(ruleset, rules=rules), questionnaire, check_limit=limit)

    try:
        return compiled(ruleset.rules)
    except CatalogError as exc:
        first = exc
    for problem in CompiledRuleset.lint(ruleset, questionnaire, check_limit=limit):
        error = CatalogError(problem.message)
        if not problem.rule_id:  # a show_if or a derived value: every rule would fail
            _engine_problem(problems, error, "ruleset")
            raise CatalogueInvalid(problems.found) from first
        _engine_problem(problems, error, "ruleset", rule_id=problem.rule_id)
    if not problems.found:
        _engine_problem(problems, first, "ruleset")
    raise CatalogueInvalid(problems.found) from first


# The engine's messages (English, from `CatalogError`), by what they mean.
_ENGINE_MESSAGES: tuple[tuple[str, str], ...] = (
    ("syntax error in condition", gettext_noop("Syntax error in the condition: %(detail)s")),
    ("unknown name", gettext_noop("The condition reads a name that is not a question code: %(detail)s")),
    ("type error in condition", gettext_noop("Type error in the condition: %(detail)s")),
    ("is not an option of", gettext_noop("A text in the condition is not an option: %(detail)s")),
    ("must give", gettext_noop("The condition does not give true or false: %(detail)s")),
    ("fires_when_blank names unknown", gettext_noop("'fires_when_blank' names an unknown question: %(detail)s")),
    ("is not a section of", gettext_noop("Unknown section: %(detail)s")),
    ("show_if conditions do not settle", gettext_noop("The show_if conditions depend on each other in a circle.")),
)  # fmt: skip


def _engine_problem(
    problems: _Problems, exc: CatalogError, part: str, *, rule_id: str | None = None
) -> None:
    text = str(exc)
    match = re.search(r"(?:rule|question|show_if of|derived value) ([A-Za-z0-9_.-]+)", text)
    code = rule_id or (match.group(1) if match else "")
    kind = "rule" if rule_id or " rule " in text else "question"
    if "derived value" in text:
        kind = "derived"
    detail = shown_safely(text.split(": ", 1)[-1], 300)
    message = gettext_noop("%(detail)s")
    for marker, translated in _ENGINE_MESSAGES:
        if marker in text:
            message = translated
            break
    field = {"rule": "when", "question": "show_if", "derived": "expression"}[kind]
    problems.add(message, {"detail": detail}, path=(part,), code=code, kind=kind, field=field)


def iter_problems(error: CatalogueInvalid) -> Iterator[dict[str, Any]]:
    for problem in error.problems:
        yield problem.as_dict()
