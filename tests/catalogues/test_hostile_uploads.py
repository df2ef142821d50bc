"""Hostile uploads get a clear error, fast, and change nothing (issue 24, "Safety")."""

import time

import pytest

from questionnaires import bounds
from questionnaires.models import QuestionnaireVersion
from scoring.catalogue_files.problems import CatalogueInvalid
from scoring.models import Ruleset
from tests.catalogues.conftest import example_bytes, upload

pytestmark = pytest.mark.django_db

RULE = """    - {{id: R-{n}, severity: low, when: 'GOV_01 == "no"', title: R, rationale: W, remediation: F}}
"""


def refused(personas, data: bytes) -> list[dict]:
    """The problems of a refused upload, after checking that it changed nothing and took less
    than two seconds."""
    started = time.monotonic()
    with pytest.raises(CatalogueInvalid) as raised:
        upload(personas, data)
    assert time.monotonic() - started < 2
    assert not QuestionnaireVersion.objects.filter(organization=personas.acme).exists()
    assert not Ruleset.objects.filter(organization=personas.acme).exists()
    return [problem.as_dict() for problem in raised.value.problems]


def test_an_oversized_file(catalog, personas):
    data = example_bytes() + b"#" * bounds.CATALOGUE_FILE_BYTES_MAX
    [problem] = refused(personas, data)
    assert "limit is 1048576 bytes" in problem["message"]


def test_ten_thousand_rules(catalog, personas):
    rules = "".join(RULE.format(n=n) for n in range(10_000)).encode()
    data = example_bytes().replace(b"  rules:\n", b"  rules:\n" + rules)
    assert len(data) < bounds.CATALOGUE_FILE_BYTES_MAX
    [problem] = refused(personas, data)
    assert "more than 100000 entries" in problem["message"]


def test_more_rules_than_the_limit_in_a_small_file(catalog, personas):
    rules = "".join(RULE.format(n=n) for n in range(bounds.CATALOGUE_RULES_MAX)).encode()
    [problem] = refused(personas, example_bytes().replace(b"  rules:\n", b"  rules:\n" + rules))
    assert problem["message"] == "There are 503 rules; the limit is 500."


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        # A comprehension inside another: its cost is the product of the lists.
        (
            "["
            + ",".join(["1"] * 200)
            + "].all(a, ["
            + ",".join(["1"] * 200)
            + "].all(b, a == b))",
            "inside another",
        ),
        ("(" * 40 + 'GOV_01 == "no"' + ")" * 40, "nests 40 brackets deep"),
        ('GOV_01 == "no" || ' * 80 + 'GOV_01 == "no"', "the limit is 1000"),
        (
            " && ".join(f"[1].exists(x{n}, x{n} == 1)" for n in range(6)),
            "has 6 comprehensions",
        ),
    ],
    ids=["nested", "deep", "long", "many"],
)
def test_a_condition_built_to_be_slow(catalog, personas, condition, expected):
    [problem] = refused(personas, example_bytes(**{"'GOV_03 > 30'": f"'{condition}'"}))
    assert problem["code"] == "DD-LONG-RETENTION" and expected in problem["message"]
    assert problem["line"] == 53


def test_unknown_codes_and_duplicate_ids_are_all_listed(catalog, personas):
    found = refused(
        personas,
        example_bytes(
            **{
                "GOV_02 == ": "GOV_99 == ",
                "GOV_03 > 30": "GOV_98 > 30",
                "code: GOV-03": "code: GOV-02",
            }
        ),
    )
    # The structure first: a duplicate stops the upload before rules are compiled.
    assert [(p["code"], p["line"]) for p in found] == [("GOV-02", 26)]
    found = refused(
        personas, example_bytes(**{"GOV_02 == ": "GOV_99 == ", "GOV_03 > 30": "GOV_98 > 30"})
    )
    assert [(p["code"], p["line"]) for p in found] == [
        ("DD-DATA-ABROAD", 47),
        ("DD-LONG-RETENTION", 53),
    ]


def test_yaml_aliases_are_refused(catalog, personas):
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    bomb += b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nruleset: [*c, *c, *c, *c, *c, *c]\n"
    [problem] = refused(personas, bomb)
    assert "aliases" in problem["message"] and problem["line"] == 1  # the anchor


def test_text_is_checked_as_all_text_is(catalog, personas):
    [problem] = refused(personas, example_bytes(**{"Governance,": "Gover\u202enance,"}))
    assert "U+202E" in problem["message"] and problem["code"] == "GOV"


def test_a_code_is_checked_as_text_too(catalog, personas):
    [problem] = refused(personas, example_bytes(**{"{code: hk,": '{code: "h\\u0000k",'}))
    assert "U+0000" in problem["message"] and problem["code"] == "GOV-02"


def test_a_text_longer_than_its_column_is_refused(catalog, personas):
    [problem] = refused(personas, example_bytes(**{"Vendor due diligence,": "V" * 201 + ","}))
    assert "201" in problem["message"]


def test_a_file_that_is_not_utf8(catalog, personas):
    [problem] = refused(personas, "questionnaire: é".encode("latin-1"))
    assert "UTF-8" in problem["message"]


def test_the_shipped_catalogue_is_within_the_bounds_of_an_upload():
    """The bounds are far above a real questionnaire: every shipped condition passes them."""
    from questionnaires.conditions import condition_cost
    from scoring.registry import builtin_catalog

    catalog = builtin_catalog()
    conditions = [rule.when for r in catalog.rulesets.values() for rule in r.rules]
    conditions += [
        q.show_if for s in catalog.questionnaires.values() for q in s.iter_questions() if q.show_if
    ]
    for condition in conditions:
        cost = condition_cost(condition)
        assert cost.length <= bounds.CONDITION_CHARS_MAX
        assert cost.nesting <= bounds.CONDITION_NESTING_MAX
        assert cost.comprehensions <= bounds.CONDITION_COMPREHENSIONS_MAX
        assert not cost.nested_comprehension


def test_a_catalogue_at_the_limits_is_checked_in_seconds():
    """500 rules, each reading three questions of twelve options (1,728 combinations each):
    the type checks share one budget, so checking takes seconds, not minutes."""
    import yaml

    from scoring.catalogue_files.checking import check_catalogue_document
    from scoring.catalogue_files.reading import read_catalogue_file
    from scoring.spec import load_frameworks_file

    def options():
        return [{"code": f"o{i}", "label": f"O{i}"} for i in range(12)]

    questions = [
        {"code": f"Q-{n}", "type": "choice", "text": "T", "options": options()} for n in range(3)
    ]
    rules = [
        {
            "id": f"R-{n}",
            "severity": "low",
            "when": 'Q_0 == "o1" && Q_1 == "o2" && Q_2 == "o3"',
            "title": "t",
            "rationale": "r",
            "remediation": "f",
        }
        for n in range(bounds.CATALOGUE_RULES_MAX)
    ]
    section = {"code": "S", "answered_by": "vendor", "title": "S", "questions": questions}
    document = {
        "questionnaire": {"slug": "big", "version": "1", "title": "B", "sections": [section]},
        "ruleset": {
            "slug": "big-rules",
            "version": "1",
            "title": "R",
            "points": {"critical": 40, "high": 15, "medium": 5, "low": 1},
            "rules": rules,
        },
    }
    started = time.monotonic()
    checked = check_catalogue_document(
        read_catalogue_file(yaml.safe_dump(document).encode(), source_name="big.yaml"),
        shipped_frameworks=load_frameworks_file(),
        owned_questionnaires={},
    )
    assert len(checked.compiled.rules) == 500 and checked.english_only
    assert time.monotonic() - started < 10
