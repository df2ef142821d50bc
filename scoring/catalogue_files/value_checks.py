"""The checks of one value in an uploaded catalogue: a text, a string, a choice, a list, a key.

Shared by every entry `checking` walks (questionnaire, section, question, option, framework,
ruleset, rule), so that one kind of value is checked, and its problem worded, in one place.
Texts go through `core.text.text_errors`; conditions are held to a static cost bound
(`questionnaires.conditions.condition_cost`) before any engine sees them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.utils.translation import gettext, gettext_noop

from core.text import shown_safely, text_errors
from questionnaires import bounds
from questionnaires.conditions import condition_cost

from .document import Path
from .problems import ProblemList


class Texts:
    """Every bilingual text of the document, to make it English only when any lacks Chinese."""

    def __init__(self) -> None:
        self.entries: list[dict[str, str]] = []
        self.missing_chinese = 0

    def english_everywhere(self) -> None:
        for entry in self.entries:
            entry["zh-hant"] = entry["en"]


def _absent(value: Any, path: Path, problems: ProblemList, *, code: str, required: bool) -> bool:
    """Whether a value is missing (a problem when it is required)."""
    if value is None and required:
        problems.add(
            gettext_noop("'%(field)s' is required."), {"field": str(path[-1])}, path=path, code=code
        )
    return value is None


def check_text(
    value: Any,
    path: Path,
    problems: ProblemList,
    texts: Texts,
    *,
    code: str,
    limit: int = bounds.CATALOGUE_TEXT_CHARS_MAX,
    required: bool = True,
) -> dict[str, str] | None:
    """A text: `{en: ..., zh-hant: ...}` (Chinese optional) or plain English text."""
    name = str(path[-1])
    if _absent(value, path, problems, code=code, required=required):
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


def check_string(
    value: Any,
    path: Path,
    problems: ProblemList,
    *,
    code: str = "",
    pattern: re.Pattern[str] | None = None,
    limit: int,
    required: bool = True,
    what: str = "",
) -> str | None:
    name = str(path[-1])
    if _absent(value, path, problems, code=code, required=required):
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


def check_choice(
    value: Any, choices: Sequence[str], path: Path, problems: ProblemList, *, code: str
) -> None:
    if value not in choices:
        problems.add(
            gettext_noop("'%(field)s' must be one of %(choices)s, not “%(value)s”."),
            {"field": path[-1], "choices": ", ".join(choices), "value": shown_safely(value)},
            path=path,
            code=code,
        )


def check_keys(
    raw: Mapping[str, Any], allowed: set[str], path: Path, problems: ProblemList, *, code: str
) -> None:
    for key in raw:
        if key not in allowed:
            problems.add(
                gettext_noop("Unknown key “%(key)s”."),
                {"key": shown_safely(key)},
                path=(*path, str(key)),
                code=code,
            )


def check_count(
    items: Any, limit: int, what: str, path: Path, problems: ProblemList, *, code: str = ""
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


def check_condition(
    expression: Any, path: Path, problems: ProblemList, *, code: str, kind: str
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


def check_unique(
    codes: list[tuple[str, Path]], what: str, problems: ProblemList, *, key: Callable[[str], str]
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
