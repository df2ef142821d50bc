"""A tiny questionnaire and ruleset, written here so the engine's own behaviour is tested apart
from the shipped catalogue."""

from __future__ import annotations

import copy
from typing import Any

from questionnaires.spec import parse_questionnaire
from scoring.engine import CompiledRuleset
from scoring.spec import parse_frameworks, parse_ruleset


def t(text: str) -> dict[str, str]:
    return {"en": text, "zh-hant": f"中文：{text}"}


QUESTIONNAIRE: dict[str, Any] = {
    "slug": "mini",
    "version": "1",
    "title": t("Mini"),
    "units": {"tokens": t("tokens"), "days": t("days")},
    "sections": [
        {
            "code": "AAA",
            "answered_by": "vendor",
            "title": t("Profile"),
            "questions": [
                {
                    "code": "AAA-01",
                    "type": "yes_no",
                    "required": True,
                    "text": t("Split?"),
                    "help": t("h"),
                },
                {
                    "code": "AAA-02",
                    "type": "integer",
                    "unit": "tokens",
                    "required": True,
                    "text": t("Ctx"),
                    "help": t("h"),
                },
                {
                    "code": "AAA-03",
                    "type": "integer",
                    "unit": "tokens",
                    "required": True,
                    "text": t("Pool"),
                    "help": t("h"),
                },
                {
                    "code": "AAA-04",
                    "type": "integer",
                    "unit": "tokens",
                    "required": True,
                    "text": t("Decode pool"),
                    "help": t("h"),
                    "show_if": 'AAA_01 == "yes"',
                },
                {
                    "code": "AAA-05",
                    "type": "choice",
                    "required": False,
                    "text": t("Engine"),
                    "help": t("h"),
                    "options": [
                        {"code": "sglang", "label": t("SGLang")},
                        {"code": "proprietary", "label": t("Own")},
                    ],
                },
                {
                    "code": "AAA-06",
                    "type": "version",
                    "required": True,
                    "text": t("Version"),
                    "help": t("h"),
                    "show_if": 'AAA_05 != "proprietary"',
                },
                {
                    "code": "AAA-07",
                    "type": "yes_no",
                    "required": True,
                    "text": t("Chained"),
                    "help": t("h"),
                    "show_if": "AAA_04 != null",
                },
            ],
        },
        {
            "code": "BBB",
            "answered_by": "buyer",
            "title": t("Buyer"),
            "questions": [
                {
                    "code": "BBB-01",
                    "type": "multi_choice",
                    "required": True,
                    "text": t("Certs"),
                    "help": t("h"),
                    "options": [
                        {"code": "iso27001", "label": t("ISO")},
                        {"code": "none", "label": t("None"), "exclusive": True},
                    ],
                },
                {
                    "code": "BBB-02",
                    "type": "date",
                    "required": False,
                    "text": t("Pentest"),
                    "help": t("h"),
                },
                {
                    "code": "BBB-03",
                    "type": "text",
                    "required": False,
                    "text": t("Notes"),
                    "help": t("h"),
                },
                {
                    "code": "BBB-04",
                    "type": "file",
                    "required": False,
                    "text": t("Log"),
                    "help": t("h"),
                },
            ],
        },
    ],
}

FRAMEWORKS = {
    "frameworks": [
        {
            "id": "REF-1",
            "jurisdiction": "hk",
            "family": t("F"),
            "title": t("Ref"),
            "confidence": "V",
        }
    ]
}


def rule(rule_id: str, severity: str, when: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": rule_id,
        "severity": severity,
        "when": when,
        "title": t(rule_id),
        "rationale": t("r"),
        "remediation": t("m"),
        "references": ["REF-1"],
        **extra,
    }


RULESET: dict[str, Any] = {
    "slug": "mini-rules",
    "version": "1",
    "questionnaire": "mini@1",
    "title": t("Mini rules"),
    "points": {"critical": 40, "high": 15, "medium": 5, "low": 1},
    "derived": {
        "pool": 'AAA_03 == null ? null : (AAA_01 == "yes" ? (AAA_04 == null ? null : (AAA_04 < AAA_03 ? AAA_04 : AAA_03)) : AAA_03)'
    },
    "rules": [
        rule("POOL-SMALL", "critical", "pool < AAA_02"),
        rule("OLD-ENGINE", "high", 'AAA_05 == "sglang" && version_lt(AAA_06, "0.5.22")'),
        rule(
            "NO-CERT", "medium", 'BBB_01 == null || "none" in BBB_01', fires_when_blank=["BBB-01"]
        ),
        rule(
            "OLD-PENTEST",
            "medium",
            "BBB_02 == null || days_between(BBB_02, as_of) > 365",
            fires_when_blank=["BBB-02"],
        ),
        rule("SPLIT-UNKNOWN", "low", 'AAA_01 == "unknown"'),
        rule("LOG-SMALL", "critical", "log_pool < log_context"),
    ],
}


def questionnaire_spec(data: dict[str, Any] | None = None):
    return parse_questionnaire(copy.deepcopy(data or QUESTIONNAIRE))


def compiled(
    ruleset: dict[str, Any] | None = None, questionnaire: dict[str, Any] | None = None
) -> CompiledRuleset:
    frameworks = parse_frameworks(FRAMEWORKS)
    return CompiledRuleset(
        parse_ruleset(copy.deepcopy(ruleset or RULESET), frameworks),
        questionnaire_spec(questionnaire),
    )
