"""The engine's own semantics, on a tiny catalogue: guards, blanks, visibility, load errors."""

import copy
import datetime as dt

import pytest

from questionnaires.spec import CatalogError
from scoring.engine import risk_tier, score_points
from scoring.evidence import EngineInstance, LogParseResult

from .catalogue import RULESET, compiled, rule

AS_OF = dt.date(2026, 12, 1)
CLEAN = {
    "AAA-01": "no",
    "AAA-02": 1000,
    "AAA-03": 2000,
    "AAA-05": "sglang",
    "AAA-06": "0.5.22",
    "BBB-01": ["iso27001"],
    "BBB-02": dt.date(2026, 6, 1),
}


@pytest.fixture(scope="module")
def engine():
    return compiled()


def fired(engine, **overrides):
    answers = {**CLEAN}
    for code, value in overrides.items():
        answers[code.replace("_", "-")] = value
    return engine.score(answers, as_of=AS_OF).fired_rule_ids


def test_a_clean_answer_set_fires_nothing(engine):
    result = engine.score(CLEAN, as_of=AS_OF)
    assert result.findings == ()
    assert (result.risk_score, result.risk_tier) == (0, "low")


def test_a_derived_value_uses_the_smaller_pool_only_when_the_condition_holds(engine):
    assert "POOL-SMALL" in fired(engine, AAA_01="yes", AAA_04=999)
    assert "POOL-SMALL" not in fired(engine, AAA_01="no", AAA_04=999)  # AAA-04 hidden: ignored


def test_a_blank_answer_stops_only_the_rule_that_reads_it(engine):
    result = fired(engine, AAA_02=None, AAA_01="unknown")
    assert "POOL-SMALL" not in result
    assert "SPLIT-UNKNOWN" in result


def test_a_rule_may_fire_on_a_blank_answer_when_it_says_so(engine):
    assert "NO-CERT" in fired(engine, BBB_01=None)
    assert "OLD-PENTEST" in fired(engine, BBB_02=None)


def test_days_between_counts_whole_days_before_the_as_of_date(engine):
    assert "OLD-PENTEST" not in fired(engine, BBB_02=AS_OF - dt.timedelta(days=365))
    assert "OLD-PENTEST" in fired(engine, BBB_02=AS_OF - dt.timedelta(days=366))


@pytest.mark.parametrize(
    ("version", "fires"),
    [
        ("0.5.3", True),
        ("0.5.21.post1", True),
        ("0.5.22rc1", True),
        ("v0.5.21", True),
        ("0.5.22", False),
        ("v0.5.100", False),
    ],
)
def test_versions_compare_in_pep_440_order(engine, version, fires):
    assert ("OLD-ENGINE" in fired(engine, AAA_06=version)) is fires


def test_a_hidden_question_is_ignored_even_when_answered(engine):
    # AAA-06 is hidden for a proprietary engine, so OLD-ENGINE cannot fire on it.
    assert "OLD-ENGINE" not in fired(engine, AAA_05="proprietary", AAA_06="0.1")


def test_visibility_settles_through_chained_conditions(engine):
    hidden = engine.visibility.hidden_codes(
        {"AAA_01": "no", "AAA_04": 5, "AAA_05": None, "AAA_07": "yes"}
        | {k: None for k in ("AAA_02", "AAA_03", "AAA_06", "BBB_01", "BBB_02", "BBB_03")}
    )
    # AAA-04 is hidden because AAA-01 is "no"; AAA-07 depends on AAA-04, so it is hidden too.
    assert hidden == {"AAA-04", "AAA-07"}


def test_log_rules_read_the_smallest_pool_and_largest_context_over_all_files(engine):
    def log(pool, context, name):
        instance = EngineInstance(
            engine="sglang",
            role="single",
            pool_tokens=pool,
            pool_line=3,
            pool_text=f"pool={pool}",
            context_tokens=context,
            context_line=4,
            context_text=f"ctx={context}",
            failed_start=False,
            rejections=0,
        )
        return LogParseResult(name, parsed=True, engine="sglang", instances=(instance,))

    result = engine.score(
        CLEAN, as_of=AS_OF, evidence={"BBB-04": [log(900, 800, "a.log"), log(5000, 1000, "b.log")]}
    )
    finding = next(f for f in result.findings if f.rule_id == "LOG-SMALL")
    pool_line, context_line = finding.evidence
    assert (pool_line.kind, pool_line.code, pool_line.file, pool_line.line) == (
        "log",
        "BBB-04",
        "a.log",
        3,
    )
    assert (pool_line.text, dict(pool_line.values)) == ("pool=900", {"pool": 900})
    assert (context_line.file, context_line.line, dict(context_line.values)) == (
        "b.log",
        4,
        {"context": 1000},
    )
    assert context_line.as_text() == "BBB-04 b.log line 4: ctx=1000"


def test_a_finding_lists_the_answers_that_made_it_fire(engine):
    result = engine.score({**CLEAN, "AAA-01": "yes", "AAA-04": 500}, as_of=AS_OF)
    finding = next(f for f in result.findings if f.rule_id == "POOL-SMALL")
    assert finding.section == "AAA"
    answers = {(item.kind, item.code, item.value) for item in finding.evidence}
    assert {("answer", "AAA-02", 1000), ("answer", "AAA-04", 500)} <= answers
    assert "AAA-02 = 1000" in [item.as_text() for item in finding.evidence]


def test_the_score_is_the_capped_sum_of_points_and_the_tier_follows_the_formula():
    points = RULESET["points"]
    assert score_points(["critical", "critical", "critical"], points) == 100
    assert risk_tier(["medium"] * 6, score_points(["medium"] * 6, points)) == "high"
    assert risk_tier(["medium"] * 2, score_points(["medium"] * 2, points)) == "medium"
    assert risk_tier(["low"] * 9, score_points(["low"] * 9, points)) == "low"
    assert risk_tier(["low"], 1) == "low" and risk_tier(["high"], 15) == "high"


def test_section_coverage_is_the_share_of_rules_that_did_not_fire(engine):
    result = engine.score({**CLEAN, "AAA-01": "unknown"}, as_of=AS_OF)
    # POOL-SMALL, OLD-ENGINE, SPLIT-UNKNOWN; the log rule belongs to the file question's section.
    assert (result.sections["AAA"].rules, result.sections["AAA"].fired) == (3, 1)
    assert result.sections["AAA"].coverage == pytest.approx(2 / 3, abs=1e-4)
    assert (result.sections["BBB"].rules, result.sections["BBB"].fired) == (3, 0)


def _with_rule(**kwargs):
    data = copy.deepcopy(RULESET)
    data["rules"].append(rule("BROKEN-RULE", "low", kwargs.pop("when"), **kwargs))
    return data


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("AAA_02 <", "syntax error"),
        ('AAA_02 == "yes"', "not an option"),
        ("AAA_02 < AAA_05", "type error"),
        ("AAA_99 == 1", "unknown name"),
        ('AAA_05 == "sglnag"', "not an option"),
        ("AAA_02", "true or false"),
    ],
)
def test_a_broken_rule_is_refused_at_load_time_naming_the_rule(when, message):
    with pytest.raises(CatalogError) as error:
        compiled(_with_rule(when=when))
    assert "BROKEN-RULE" in str(error.value)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("AAA_02 > 1", "an integer or null"),
        ('AAA_02 + "x"', "type error"),
        ("AAA_99", "unknown name"),
    ],
)
def test_a_broken_derived_value_is_refused_at_load_time(expression, message):
    data = copy.deepcopy(RULESET)
    data["derived"] = {"pool": expression}
    with pytest.raises(CatalogError) as error:
        compiled(data)
    assert "derived value pool" in str(error.value) and message in str(error.value)
