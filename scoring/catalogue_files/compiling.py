"""Compiling a checked catalogue with the same parser and engine as the shipped catalogue.

After `checking` has held every entry to its shape, the content is parsed (`parse_questionnaire`,
`parse_ruleset`), its framework references and target questionnaires are resolved, and its
conditions are compiled (`CompiledRuleset`, with a shared budget of type checks). What the
engine says (English, from `CatalogError`) is turned into problems naming the rule or question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.utils.translation import gettext_noop

from core.text import shown_safely
from questionnaires import bounds
from questionnaires.spec import CatalogError, QuestionnaireSpec, parse_questionnaire

from ..engine import CompiledRuleset
from ..registry import check_answers_fit
from ..spec import FrameworkRef, RulesetSpec, RuleSpec, parse_frameworks, parse_ruleset
from .problems import CatalogueInvalid, ProblemList


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


def compile_catalogue(
    problems: ProblemList,
    questionnaire_content: dict[str, Any] | None,
    ruleset_content: dict[str, Any],
    shipped_frameworks: Mapping[str, FrameworkRef],
    owned: Mapping[str, Mapping[str, Any]],
    english_only: bool,
    missing_chinese: int,
) -> CheckedCatalogue:
    """Parse and compile checked content as the shipped catalogue is; raise `CatalogueInvalid`
    naming what the parser or the engine refused."""
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
    problems: ProblemList, ruleset: RulesetSpec, questionnaire: QuestionnaireSpec
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
    problems: ProblemList, exc: CatalogError, part: str, *, rule_id: str | None = None
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
    params = {"detail": detail}
    # A string that is not an option: said whole in the reader's language, not half in English.
    not_an_option = re.search(r"“(.*)” is not an option of ([A-Za-z0-9_, -]+)$", text)
    if not_an_option and not_an_option.group(2) != "no question":
        message = gettext_noop("“%(value)s” in the condition is not an option of %(questions)s.")
        params = {
            "value": shown_safely(not_an_option.group(1), 200),
            "questions": not_an_option.group(2),
        }
    problems.add(message, params, path=(part,), code=code, kind=kind, field=field)
