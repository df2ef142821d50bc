"""The rule workbench's two pure functions: `CompiledRuleset.explain` (which rules fire, which
do not and why, with the very result `score` gives) and `CompiledRuleset.lint` (each static
problem at its rule)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from scoring.engine import CompiledRuleset
from scoring.registry import builtin_catalog
from scoring.results import ProblemKind, rule_changes

RULESET = "incident-2026-kv@1"
AS_OF = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def engine() -> CompiledRuleset:
    return builtin_catalog().compiled(RULESET)


def outcome(explanation, rule_id):
    return next(rule for rule in explanation.rules if rule.rule_id == rule_id)


def test_a_rule_that_fires_shows_the_values_it_read(engine):
    answers = {"PRF-07": "unknown"}
    explanation = engine.explain(answers, as_of=AS_OF)
    rule = outcome(explanation, "ARCHITECTURE-UNKNOWN")
    assert rule.fired and rule.blank == ()
    assert rule.condition == 'PRF_07 == "unknown"'
    assert [(read.code, read.value) for read in rule.reads] == [("PRF-07", "unknown")]
    # The very result the workers record.
    assert explanation.result == engine.score(answers, as_of=AS_OF)
    assert "ARCHITECTURE-UNKNOWN" in explanation.result.fired_rule_ids


def test_a_rule_whose_condition_is_false_is_not_stopped_by_a_blank(engine):
    rule = outcome(engine.explain({"PRF-07": "yes"}, as_of=AS_OF), "ARCHITECTURE-UNKNOWN")
    assert not rule.fired and rule.blank == ()
    assert rule.reads[0].value == "yes"


def test_a_rule_stopped_by_a_blank_answer_names_it(engine):
    explanation = engine.explain({"PRF-05": "sglang", "PRF-07": "yes"}, as_of=AS_OF)
    rule = outcome(explanation, "SGLANG-DISAGG-REJECTION")
    assert not rule.fired
    assert rule.blank == ("PRF-06",)
    assert {read.code: read.value for read in rule.reads} == {
        "PRF-05": "sglang",
        "PRF-07": "yes",
        "PRF-06": None,
    }


def lint(engine, **conditions):
    ruleset = engine.ruleset
    rules = tuple(
        dataclasses.replace(rule, when=conditions.get(rule.id, rule.when)) for rule in ruleset.rules
    )
    return engine.lint(dataclasses.replace(ruleset, rules=rules), engine.questionnaire)


def test_the_shipped_ruleset_has_no_problem(engine):
    assert engine.lint(engine.ruleset, engine.questionnaire) == []


@pytest.mark.parametrize(
    ("condition", "kind", "names"),
    [
        ('PRF_07 == "yes" &&', ProblemKind.SYNTAX, ()),
        ('ZZZ_99 == "yes"', ProblemKind.UNKNOWN_CODE, ("ZZZ_99",)),
        ('PRF_07 == "unknwon"', ProblemKind.NOT_AN_OPTION, ("unknwon",)),
        ("CTX_01 > true", ProblemKind.TYPE, ()),
        ("CTX_01 + 1", ProblemKind.TYPE, ()),
    ],
)
def test_each_problem_is_reported_at_its_rule(engine, condition, kind, names):
    problems = lint(engine, **{"ARCHITECTURE-UNKNOWN": condition})
    assert [(p.rule_id, p.kind, p.names) for p in problems] == [
        ("ARCHITECTURE-UNKNOWN", kind, names)
    ]
    assert "ARCHITECTURE-UNKNOWN" in problems[0].message


def test_every_rule_with_a_problem_is_reported_not_only_the_first(engine):
    problems = lint(
        engine,
        **{"ARCHITECTURE-UNKNOWN": "((", "SGLANG-DISAGG-REJECTION": 'PRF_05 == "sglnag"'},
    )
    assert {p.rule_id for p in problems} == {"ARCHITECTURE-UNKNOWN", "SGLANG-DISAGG-REJECTION"}


def test_rule_changes_are_added_and_removed_rule_ids():
    assert rule_changes({"A", "B"}, ["B", "C", "D"]) == (["C", "D"], ["A"])
