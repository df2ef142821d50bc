"""A starter ruleset for an imported questionnaire: a catalogue needs one to be published.

Made in the questionnaire's languages for its author to change in the rule workbench before
publishing: a control the vendor says it lacks ("no") is a medium finding. Not a judgement of
the questionnaire's own risks, which only its author can write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import translation
from django.utils.translation import gettext_lazy

from questionnaires import bounds
from questionnaires.spec import LANGUAGES, YES_NO_CODES, code_to_identifier

# Points per severity of a starter ruleset: those of the shipped rulesets.
STARTER_POINTS = {"critical": 40, "high": 15, "medium": 5, "low": 1}


def starter_ruleset(questionnaire: Mapping[str, Any], *, bilingual: bool) -> dict[str, Any]:
    """A first ruleset for an imported questionnaire, for its author to change in the rule
    workbench before publishing (a catalogue needs one): each question that can be answered
    "no" (yes/no, and CSA's Yes / No / NA) is a medium finding when it is — a control the vendor
    says it lacks. Without any such question, the first required question left blank is a low
    one. At most `bounds.CATALOGUE_RULES_MAX` rules."""
    questions = [q for section in questionnaire["sections"] for q in section["questions"]]
    rules: list[dict[str, Any]] = []
    for question in questions:
        codes = (
            YES_NO_CODES
            if question["type"] == "yes_no"
            else [o["code"] for o in question.get("options", ())]
            if question["type"] == "choice"
            else ()
        )
        if "no" not in codes or len(rules) >= bounds.CATALOGUE_RULES_MAX:
            continue
        code = question["code"]
        rules.append(
            {
                "id": f"{code}-NO",
                "severity": "medium",
                "when": f'{code_to_identifier(code)} == "no"',
                **_rule_texts(
                    bilingual,
                    code=code,
                    title=gettext_lazy("%(code)s answered “No”"),
                    rationale=gettext_lazy(
                        "The vendor says it does not meet %(code)s. (A starter rule made on "
                        "import: check its severity and wording before publishing.)"
                    ),
                    remediation=gettext_lazy(
                        "Ask the vendor how and when it will meet %(code)s, or accept the risk."
                    ),
                ),
            }
        )
    if not rules:
        readable = [q for q in questions if q["type"] != "file"] or questions
        first = next((q for q in readable if q["required"]), readable[0])
        code = first["code"]
        rules.append(
            {
                "id": f"{code}-BLANK",
                "severity": "low",
                "when": f"{code_to_identifier(code)} == null",
                "fires_when_blank": [code],
                **_rule_texts(
                    bilingual,
                    code=code,
                    title=gettext_lazy("%(code)s left blank"),
                    rationale=gettext_lazy(
                        "The vendor did not answer %(code)s. (A starter rule made on import: "
                        "write the questionnaire's own rules before publishing.)"
                    ),
                    remediation=gettext_lazy("Ask the vendor to answer %(code)s."),
                ),
            }
        )
    title = questionnaire["title"]
    return {
        "slug": f"{questionnaire['slug']}-rules"[: bounds.CATALOGUE_SLUG_CHARS_MAX],
        "version": "1",
        "questionnaire": f"{questionnaire['slug']}@{questionnaire['version']}",
        "title": {
            language: f"{text} ({_in(language, STARTER_LABEL)})" for language, text in title.items()
        },
        "points": dict(STARTER_POINTS),
        "rules": rules,
    }


STARTER_LABEL = gettext_lazy("starter rules")


def _in(language: str, text: Any, **params: Any) -> str:
    with translation.override(language):
        return str(text) % params if params else str(text)


def _rule_texts(bilingual: bool, *, code: str, **texts: Any) -> dict[str, dict[str, str]]:
    languages = LANGUAGES if bilingual else ("en",)
    return {
        name: {language: _in(language, text, code=code) for language in languages}
        for name, text in texts.items()
    }
