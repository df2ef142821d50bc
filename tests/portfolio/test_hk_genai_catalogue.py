"""The "hk-genai-provider" v1 catalogue document (examples/catalogues/): the organization upload's
checks accept it (they parse and compile it with the shipped parsers and engine), every question
and rule cites a known clause, every text has its Chinese, and answer sets score the tiers its
rules say — through the engine, never copied numbers.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
import yaml

from assessments import factories
from portfolio.management.commands.load_demo_catalogue import DOCUMENT
from questionnaires.validation import missing_required, validate_answers
from scoring.catalogue_files.checking import check_catalogue_document
from scoring.catalogue_files.problems import CatalogueInvalid
from scoring.catalogue_files.reading import read_catalogue_file
from scoring.engine import risk_tier, score_points
from scoring.spec import load_frameworks_file, parse_frameworks

AS_OF = dt.date(2026, 12, 5)
CJK = re.compile(r"[\u3400-\u9fff]")

# A provider with every safeguard, for a bank's customer-facing chatbot fed with personal data
# (every regulator-dependent rule can then fire).
STRONG: dict[str, Any] = {
    "GOV-01": "committee",
    "GOV-02": "limited",
    "GOV-03": "own",
    "GOV-04": "example-chat-2.1",
    "DAT-01": "never",
    "DAT-02": 0,
    "DAT-03": "yes",
    "DAT-04": "deleted_certified",
    "DAT-05": "no",
    "XBT-01": ["hk"],
    "XBT-02": "yes",
    "PRC-01": "yes",
    "PRC-02": "yes",
    "PRC-03": "yes",
    "PRC-04": "advance_notice_objection",
    "PRC-05": "yes",
    "TST-01": "every_release",
    "TST-02": ["accuracy", "bias", "adversarial", "privacy_leakage"],
    "TST-03": "yes",
    "MON-01": "yes",
    "MON-02": "yes",
    "MON-03": 24,
    "MON-04": "yes",
    "SEC-01": "dedicated_instance",
    "SEC-03": ["input_filtering", "output_filtering", "tool_permissions"],
    "SEC-04": "yes",
    "HUM-01": "yes",
    "HUM-02": "yes",
    "HUM-03": "yes",
    "USE-01": ["hkma_ai", "sfc_lc"],
    "USE-02": "yes",
    "USE-03": "yes",
    "USE-04": "yes",
}


def checked_upload(data: bytes):
    """What an owner's upload checks (`catalogue_upload` before it saves anything)."""
    return check_catalogue_document(
        read_catalogue_file(data, source_name=DOCUMENT.name),
        shipped_frameworks=load_frameworks_file(),
        owned_questionnaires={},
    )


@pytest.fixture(scope="module")
def document():
    return checked_upload(DOCUMENT.read_bytes())


@pytest.fixture(scope="module")
def engine(document):
    return document.compiled


@pytest.fixture(scope="module")
def own_frameworks(document):
    return parse_frameworks({"frameworks": document.ruleset_content["frameworks"]})


def score(engine, document, changes: dict[str, Any]):
    answers = {k: v for k, v in {**STRONG, **changes}.items() if v is not None}
    clean = validate_answers(document.questionnaire, answers).values
    assert missing_required(document.questionnaire, clean) == []
    return engine.score(clean, as_of=AS_OF)


def fired(result) -> set[str]:
    return {finding.rule_id for finding in result.findings}


def test_parses_compiles_and_is_sized_as_briefed(document, engine):
    assert document.questionnaire.key == "hk-genai-provider@1"
    assert document.ruleset.questionnaire == document.questionnaire.key
    assert 25 <= len(document.questionnaire.questions) <= 40
    assert 15 <= len(document.ruleset.rules) <= 30
    assert {r.severity for r in document.ruleset.rules} == {"critical", "high", "medium", "low"}
    # The points of the shipped rulesets, so scores compare across questionnaires.
    assert document.ruleset.points == {"critical": 40, "high": 15, "medium": 5, "low": 1}
    assert len(engine.rules) == len(document.ruleset.rules)
    assert not document.english_only


def test_every_question_and_rule_cites_a_known_clause(document, own_frameworks):
    known = {**load_frameworks_file(), **own_frameworks}
    for question in document.questionnaire.iter_questions():
        assert question.references, question.code
        assert set(question.references) <= set(known), question.code
    for rule in document.ruleset.rules:
        assert rule.references, rule.id
        assert {ref for ref in rule.references if ref.startswith("HK-")}, rule.id
    # Every clause added here was known only as summarised (the file's header says what was
    # read in the primary text: titles, dates, headings), so it is printed "as summarised".
    assert own_frameworks
    assert all(ref.as_summarised for ref in own_frameworks.values())


def test_an_unknown_citation_of_a_question_is_refused_with_its_line():
    text = DOCUMENT.read_text(encoding="utf-8")
    cited = "          references: [HK-DPO-GENAI-2025-RISK]"  # (a rule cites it less indented)
    assert text.count(cited) == 1  # GOV-02's
    bad = text.replace(cited, "          references: [HK-NO-SUCH-CLAUSE]")
    with pytest.raises(CatalogueInvalid) as refused:
        checked_upload(bad.encode())
    (problem,) = refused.value.problems
    assert (problem.code, problem.line) == ("GOV-02", 1 + text[: text.index(cited)].count("\n"))
    assert "HK-NO-SUCH-CLAUSE" in problem.text()


def texts(node: Any, where: str = ""):
    """Every bilingual text ({en, zh-hant}) in the raw document, with where it is."""
    if isinstance(node, dict):
        if "en" in node:
            yield where, node
        for key, value in node.items():
            yield from texts(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            code = value.get("code") or value.get("id") if isinstance(value, dict) else None
            yield from texts(value, f"{where}/{code or index}")


def test_every_text_has_its_chinese(document):
    found = list(texts(yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))))
    assert len(found) > 2 * len(document.questionnaire.questions) + 3 * len(document.ruleset.rules)
    for where, text in found:
        chinese = text.get("zh-hant")
        assert isinstance(chinese, str) and chinese.strip(), where
        # Written in Chinese, not the English copied (a code or name alone may stay as it is).
        assert CJK.search(chinese) or chinese == text["en"] and len(chinese) < 40, where


def test_the_strong_provider_scores_low_with_nothing_found(engine, document):
    result = score(engine, document, {})
    assert fired(result) == set()
    assert result.risk_tier == "low"


@pytest.mark.parametrize(
    ("changes", "rules", "tier"),
    [
        # Two medium rules: 10 points, no high one.
        (
            {"TST-01": "ad_hoc", "TST-03": "no"},
            {"GENAI-AD-HOC-VALIDATION", "GENAI-MODEL-CHANGES-UNANNOUNCED"},
            "medium",
        ),
        # One low rule stays low.
        ({"GOV-02": "not_classified"}, {"GENAI-RISK-NOT-CLASSIFIED"}, "low"),
        # A high rule for a regulated buyer only.
        ({"PRC-05": "no"}, {"GENAI-NO-AUDIT-RIGHTS-FOR-REGULATED-BUYER"}, "high"),
        # Training by default on the personal data the buyer sends: critical.
        ({"DAT-01": "by_default"}, {"GENAI-TRAINS-ON-PERSONAL-DATA"}, "critical"),
        # No human review of investment advice (an SFC licensed corporation): critical, and the
        # bank's human-in-the-loop rule too.
        (
            {"HUM-02": "no"},
            {
                "GENAI-NO-HUMAN-REVIEW-FOR-INVESTMENT-ADVICE",
                "GENAI-NO-HUMAN-IN-THE-LOOP-FOR-BANK-CUSTOMERS",
            },
            "critical",
        ),
    ],
)
def test_answer_sets_score_the_tier_their_rules_say(engine, document, changes, rules, tier):
    result = score(engine, document, changes)
    assert fired(result) == rules
    severities = [f.severity for f in result.findings]
    assert result.risk_score == score_points(severities, document.ruleset.points)
    assert result.risk_tier == risk_tier(severities, result.risk_score) == tier


@pytest.mark.parametrize(
    ("changes", "rules"),
    [
        # Without personal data, training by default is high, not critical; no DPA is not critical.
        (
            {"USE-03": "no", "DAT-01": "by_default", "PRC-01": "no", "PRC-02": None},
            {"GENAI-TRAINS-ON-CUSTOMER-DATA"},
        ),
        ({"PRC-01": "no", "PRC-02": None}, {"GENAI-NO-PROCESSOR-AGREEMENT"}),
        # Without a sector regulator the regulator-dependent rules stay silent.
        (
            {
                "USE-01": ["none"],
                "USE-04": None,
                "PRC-05": "no",
                "XBT-02": "no",
                "HUM-02": "no",
                "HUM-03": "no",
            },
            set(),
        ),
        # "Unknown" in the buyer's section counts on the side that asks more of the provider.
        ({"USE-03": "unknown", "DAT-01": "by_default"}, {"GENAI-TRAINS-ON-PERSONAL-DATA"}),
        (
            {"USE-01": ["sfc_lc"], "USE-04": "unknown", "HUM-02": "no"},
            {"GENAI-NO-HUMAN-REVIEW-FOR-INVESTMENT-ADVICE"},
        ),
        # A hidden follow-up is ignored: no staff access (DAT-05 = no) hides DAT-06.
        ({"DAT-06": "unrestricted"}, set()),
        ({"DAT-05": "yes", "DAT-06": "unrestricted"}, {"GENAI-HUMAN-ACCESS-UNRESTRICTED"}),
        # XBT-03 is asked only when data leaves Hong Kong.
        ({"XBT-03": "none"}, set()),
        ({"XBT-01": ["hk", "sg"], "XBT-03": "none"}, {"GENAI-TRANSFER-WITHOUT-SAFEGUARD"}),
        # SEC-02 is asked only of a shared endpoint.
        (
            {"SEC-01": "shared_multi_tenant", "SEC-02": "no"},
            {"GENAI-SHARED-ENDPOINT-ISOLATION-UNTESTED"},
        ),
        ({"SEC-03": ["none"]}, {"GENAI-NO-INJECTION-DEFENCES"}),
        ({"MON-03": 96}, {"GENAI-SLOW-NOTIFICATION"}),
        ({"MON-03": 72}, set()),
    ],
)
def test_conditions(engine, document, changes, rules):
    answers = {k: v for k, v in {**STRONG, **changes}.items() if v is not None}
    for code in [k for k, v in changes.items() if v is None]:
        answers.pop(code, None)
    clean = validate_answers(document.questionnaire, answers).values
    assert fired(engine.score(clean, as_of=AS_OF)) == rules


def test_the_demo_example_is_valid_and_scores_high(engine, document):
    example = factories.example("catalogues/hk-genai-provider-example")
    assert (example["questionnaire"], example["version"]) == ("hk-genai-provider", "1")
    clean = validate_answers(document.questionnaire, example["answers"], example["comments"])
    assert missing_required(document.questionnaire, clean.values) == []
    result = engine.score(clean.values, as_of=AS_OF)
    severities = {f.severity for f in result.findings}
    assert "critical" not in severities and "high" in severities
    assert result.risk_tier == "high"
