"""Checking an uploaded catalogue's document, entry by entry, before it is compiled.

`check_catalogue_document` walks the document (questionnaire, sections, questions, options,
frameworks, ruleset, rules), holds each entry to its keys, codes and sizes
(`questionnaires.bounds`), collects every problem with its line and code rather than stopping
at the first, and hands what passed to `compiling`. A catalogue with any text lacking Chinese
is made English only, so pages and reports mark it instead of showing a half translation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext, gettext_noop

from core.text import shown_safely
from questionnaires import bounds
from questionnaires.spec import (
    ANSWER_TYPES,
    AUDIENCES,
    FILE_PARSERS,
    PRODUCERS,
    CatalogError,
    resolve_extension,
)

from ..spec import SEVERITIES, FrameworkRef
from .compiling import CheckedCatalogue, compile_catalogue
from .document import CatalogueDocument, Path
from .problems import ProblemList
from .value_checks import (
    Texts,
    check_choice,
    check_condition,
    check_count,
    check_keys,
    check_string,
    check_text,
    check_unique,
)

# What the content of an English-only catalogue says about itself (`languages`), so pages and
# reports mark it instead of showing a half translation.
ENGLISH_ONLY = ["en"]

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+-]*$")
# A question, section or rule code: what AVIA's conditions can name (the spreadsheet import makes
# its codes to it: spreadsheets.catalogue_import.questions.question_code).
CODE_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
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


def check_catalogue_document(
    document: CatalogueDocument,
    *,
    shipped_frameworks: Mapping[str, FrameworkRef],
    owned_questionnaires: Mapping[str, Mapping[str, Any]],
) -> CheckedCatalogue:
    """Check an uploaded catalogue whole; raise `CatalogueInvalid` listing every problem found.

    `owned_questionnaires`: the content of the owner's published questionnaire versions by
    `slug@version` (a ruleset may score one of them, a new version may `extends` one)."""
    problems = ProblemList(document)
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
    texts = Texts()
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
    return compile_catalogue(
        problems,
        questionnaire_content,
        ruleset_content,
        shipped_frameworks,
        owned_questionnaires,
        english_only,
        texts.missing_chinese if english_only else 0,
    )


def _check_slug_and_version(
    raw: Mapping[str, Any], path: Path, problems: ProblemList, content: dict[str, Any]
) -> None:
    """The `slug` and `version` that name a questionnaire or a ruleset (`slug@version`)."""
    for name, pattern, limit, what in (
        ("slug", _SLUG, bounds.CATALOGUE_SLUG_CHARS_MAX,
         gettext_noop("lowercase letters, digits and single hyphens")),
        ("version", _VERSION, bounds.CATALOGUE_VERSION_CHARS_MAX,
         gettext_noop("letters, digits, dots, + and -")),
    ):  # fmt: skip
        content[name] = check_string(
            raw.get(name), (*path, name), problems, pattern=pattern, limit=limit, what=what
        )


def _check_questionnaire(
    raw: Any,
    problems: ProblemList,
    texts: Texts,
    owned: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any] | None:
    path: Path = ("questionnaire",)
    if not isinstance(raw, dict):
        problems.add(gettext_noop("'questionnaire' must be a mapping."), path=path)
        return None
    check_keys(raw, _QUESTIONNAIRE_KEYS - {"languages"}, path, problems, code="questionnaire")
    content = dict(raw)
    _check_slug_and_version(raw, path, problems, content)
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
    content["title"] = check_text(
        content.get("title"), (*path, "title"), problems, texts, code="questionnaire",
        limit=bounds.CATALOGUE_LABEL_CHARS_MAX,
    )  # fmt: skip
    description = check_text(
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
        str(name): check_text(
            label, (*path, "units", str(name)), problems, texts, code=str(name),
            limit=bounds.CATALOGUE_LABEL_CHARS_MAX,
        )
        for name, label in units.items()
    }  # fmt: skip
    if not content["units"]:
        content.pop("units")
    sections = check_count(
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
    check_unique(section_codes, gettext_noop("section code"), problems, key=str)
    # Conditions name a question by its code with "-" as "_": PRF-05 and PRF_05 would clash.
    check_unique(
        question_codes, gettext_noop("question code"), problems, key=lambda c: c.replace("-", "_")
    )
    content["sections"] = checked_sections
    for key in ("add_sections", "add_questions"):
        content.pop(key, None)
    return content


def _entry_code(raw: Any, path: Path, problems: ProblemList, not_a_mapping: str) -> str | None:
    """The code of a section or question entry (None, with a problem, when it has none)."""
    if not isinstance(raw, dict):
        problems.add(not_a_mapping, path=path)
        return None
    return check_string(
        raw.get("code"), (*path, "code"), problems, pattern=CODE_PATTERN,
        limit=bounds.CATALOGUE_CODE_CHARS_MAX, what=gettext_noop("a letter, then letters, digits, - or _"),
    )  # fmt: skip


def _check_section(
    raw: Any,
    path: Path,
    problems: ProblemList,
    texts: Texts,
    units: set[str],
    question_codes: list[tuple[str, Path]],
) -> dict[str, Any] | None:
    code = _entry_code(raw, path, problems, gettext_noop("A section must be a mapping."))
    if code is None:
        return None
    check_keys(raw, _SECTION_KEYS - {"before"}, path, problems, code=code)
    check_choice(raw.get("answered_by"), AUDIENCES, (*path, "answered_by"), problems, code=code)
    content: dict[str, Any] = {"code": code, "answered_by": raw.get("answered_by")}
    content["title"] = check_text(
        raw.get("title"), (*path, "title"), problems, texts, code=code,
        limit=bounds.CATALOGUE_LABEL_CHARS_MAX,
    )  # fmt: skip
    intro = check_text(raw.get("intro"), (*path, "intro"), problems, texts, code=code,
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
    raw: Any, path: Path, problems: ProblemList, texts: Texts, units: set[str]
) -> dict[str, Any] | None:
    code = _entry_code(raw, path, problems, gettext_noop("A question must be a mapping."))
    if code is None:
        return None
    check_keys(raw, _QUESTION_KEYS, path, problems, code=code)
    answer_type = raw.get("type")
    check_choice(answer_type, ANSWER_TYPES, (*path, "type"), problems, code=code)
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
        checked = check_text(raw.get(name), (*path, name), problems, texts, code=code,
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
        check_condition(raw["show_if"], (*path, "show_if"), problems, code=code, kind="question")
    if answer_type == "file":
        if "parser" in raw:
            check_choice(raw["parser"], FILE_PARSERS, (*path, "parser"), problems, code=code)
        if "produced_by" in raw:
            check_choice(raw["produced_by"], PRODUCERS, (*path, "produced_by"), problems,
                         code=code)  # fmt: skip
    elif "parser" in raw or "produced_by" in raw:
        problems.add(gettext_noop("'parser' and 'produced_by' are for file questions."), path=path,
                     code=code)  # fmt: skip
    options = check_count(
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
        option_code = check_string(
            option.get("code"), (*option_path, "code"), problems, code=code,
            limit=bounds.CATALOGUE_ID_CHARS_MAX,
        )  # fmt: skip
        if option_code is None:
            continue
        where = f"{code} {option_code}"
        check_keys(option, _OPTION_KEYS, option_path, problems, code=where)
        label = check_text(option.get("label"), (*option_path, "label"), problems, texts,
                           code=where, limit=bounds.CATALOGUE_LABEL_CHARS_MAX)  # fmt: skip
        option_codes.append((option_code, option_path))
        checked_options.append(
            {"code": option_code, "label": label, "exclusive": bool(option.get("exclusive"))}
        )
    check_unique(option_codes, gettext_noop("option code"), problems, key=str)
    if checked_options:
        content["options"] = checked_options
    return content


def _check_frameworks(raw: Any, problems: ProblemList, texts: Texts) -> list[dict[str, Any]]:
    path: Path = ("frameworks",)
    entries = check_count(raw, bounds.CATALOGUE_FRAMEWORKS_MAX, gettext_noop("framework references"),
                          path, problems)  # fmt: skip
    checked = []
    ids: list[tuple[str, Path]] = []
    for index, entry in enumerate(entries):
        entry_path: Path = (*path, index)
        if not isinstance(entry, dict):
            problems.add(gettext_noop("A framework reference must be a mapping."), path=entry_path)
            continue
        ref_id = check_string(entry.get("id"), (*entry_path, "id"), problems,
                              limit=bounds.CATALOGUE_ID_CHARS_MAX)  # fmt: skip
        if ref_id is None:
            continue
        check_keys(entry, _FRAMEWORK_KEYS, entry_path, problems, code=ref_id)
        check_choice(entry.get("jurisdiction"), ("hk", "international"),
                     (*entry_path, "jurisdiction"), problems, code=ref_id)  # fmt: skip
        check_choice(entry.get("confidence"), ("V", "S"), (*entry_path, "confidence"),
                     problems, code=ref_id)  # fmt: skip
        family = check_text(entry.get("family"), (*entry_path, "family"), problems, texts,
                            code=ref_id, limit=bounds.CATALOGUE_LABEL_CHARS_MAX)  # fmt: skip
        title = check_text(entry.get("title"), (*entry_path, "title"), problems, texts,
                           code=ref_id)  # fmt: skip
        ids.append((ref_id, entry_path))
        checked.append({**entry, "id": ref_id, "family": family, "title": title})
    check_unique(ids, gettext_noop("framework reference"), problems, key=str)
    return checked


def _check_ruleset(raw: Any, problems: ProblemList, texts: Texts) -> dict[str, Any] | None:
    path: Path = ("ruleset",)
    check_keys(raw, _RULESET_KEYS - {"languages", "frameworks", "extends"}, path, problems,
               code="ruleset")  # fmt: skip
    content = dict(raw)
    content.pop("languages", None)
    _check_slug_and_version(raw, path, problems, content)
    content["title"] = check_text(raw.get("title"), (*path, "title"), problems, texts,
                                  code="ruleset", limit=bounds.CATALOGUE_LABEL_CHARS_MAX)  # fmt: skip
    description = check_text(raw.get("description"), (*path, "description"), problems, texts,
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
            check_condition(expression, (*path, "derived", str(name)), problems,
                            code=str(name), kind="derived")  # fmt: skip
    rules = check_count(raw.get("rules"), bounds.CATALOGUE_RULES_MAX, gettext_noop("rules"),
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
    check_unique(rule_ids, gettext_noop("rule id"), problems, key=str)
    content["rules"] = checked_rules
    return content


def _check_rule(raw: Any, path: Path, problems: ProblemList, texts: Texts) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        problems.add(gettext_noop("A rule must be a mapping."), path=path)
        return None
    rule_id = check_string(raw.get("id"), (*path, "id"), problems, pattern=CODE_PATTERN,
                           limit=bounds.CATALOGUE_ID_CHARS_MAX,
                           what=gettext_noop("a letter, then letters, digits, - or _"))  # fmt: skip
    if rule_id is None:
        return None
    check_keys(raw, _RULE_KEYS, path, problems, code=rule_id)
    check_choice(raw.get("severity"), SEVERITIES, (*path, "severity"), problems, code=rule_id)
    check_condition(raw.get("when"), (*path, "when"), problems, code=rule_id, kind="rule")
    content = dict(raw)
    content["id"] = rule_id
    for name in ("title", "rationale", "remediation"):
        content[name] = check_text(
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
