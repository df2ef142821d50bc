"""Answer validation by type: one error per offending code, nothing accepted from a bad request."""

import datetime as dt

import pytest
from django.utils import translation

from questionnaires.validation import AnswerValidationError, missing_required, validate_answers
from tests.engine.catalogue import questionnaire_spec

Q = questionnaire_spec()


def errors_of(answers, comments=None, **kwargs):
    with pytest.raises(AnswerValidationError) as caught:
        validate_answers(Q, answers, comments, **kwargs)
    return caught.value.as_text_dict()


@pytest.mark.parametrize("value", ["1M", "1e6", 1.5, 1048576.0, -1, "-5", True, "12,34", [1]])
def test_it_rejects_integers_that_are_not_whole_non_negative_numbers(value):
    assert list(errors_of({"AAA-02": value})) == ["AAA-02"]


@pytest.mark.parametrize(
    ("value", "stored"), [(1048576, 1048576), ("1,048,576", 1048576), (" 42 ", 42), (0, 0)]
)
def test_it_accepts_plain_and_grouped_integers(value, stored):
    assert validate_answers(Q, {"AAA-02": value}).values == {"AAA-02": stored}


def test_it_reports_every_offending_code_at_once():
    errors = errors_of({"AAA-02": "1M", "AAA-05": "vllm", "ZZZ-01": "x", "AAA-01": "maybe"})
    assert set(errors) == {"AAA-02", "AAA-05", "ZZZ-01", "AAA-01"}
    assert "“SGLang” (sglang), “Own” (proprietary)" in errors["AAA-05"][0]


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("0.5.22", True),
        ("v0.5.21.post1", True),
        ("0.5.22rc1", True),
        ("latest", False),
        ("0.5.22-beta.1+x y", False),
    ],
)
def test_versions_must_follow_pep_440(value, valid):
    if valid:
        assert validate_answers(Q, {"AAA-06": value}).values["AAA-06"] == value
    else:
        assert "AAA-06" in errors_of({"AAA-06": value})


def test_multi_choice_rejects_duplicates_unknown_codes_and_combining_an_exclusive_option():
    assert "BBB-01" in errors_of({"BBB-01": ["iso27001", "iso27001"]})
    assert "BBB-01" in errors_of({"BBB-01": ["soc9"]})
    assert "cannot be combined" in errors_of({"BBB-01": ["none", "iso27001"]})["BBB-01"][0]
    assert "BBB-01" in errors_of({"BBB-01": "iso27001"})


def test_dates_are_iso_dates():
    assert validate_answers(Q, {"BBB-02": "2025-02-28"}).values["BBB-02"] == dt.date(2025, 2, 28)
    for bad in ("2025-02-30", "28/02/2025", "2025-2-8", 20250228):
        assert "BBB-02" in errors_of({"BBB-02": bad})


def test_text_is_limited_to_4000_characters():
    assert validate_answers(Q, {"BBB-03": "x" * 4000}).values["BBB-03"] == "x" * 4000
    assert "4001" in errors_of({"BBB-03": "x" * 4001})["BBB-03"][0]


def test_file_questions_cannot_be_answered_with_text():
    assert "BBB-04" in errors_of({"BBB-04": "see attached"})


def test_blank_values_clear_an_answer():
    assert validate_answers(Q, {"AAA-02": "", "BBB-01": [], "AAA-05": None}).values == {
        "AAA-02": None,
        "BBB-01": None,
        "AAA-05": None,
    }


def test_comments_must_name_known_questions():
    assert "ZZZ-09" in errors_of({}, {"ZZZ-09": "hello"})
    assert validate_answers(Q, {}, {"AAA-02": " from the log "}).comments == {
        "AAA-02": "from the log"
    }


def test_a_caller_may_be_limited_to_some_questions():
    errors = errors_of({"BBB-01": ["none"], "AAA-02": 5}, allowed_codes={"AAA-02"})
    assert list(errors) == ["BBB-01"]


def test_errors_are_translated_to_traditional_chinese():
    with translation.override("zh-hant"):
        message = errors_of({"AAA-02": "1M"})["AAA-02"][0]
    assert "詞元" in message


def test_required_questions_count_only_when_visible():
    answers = {
        "AAA-01": "no",
        "AAA-02": 1,
        "AAA-03": 2,
        "AAA-05": "proprietary",
        "BBB-01": ["none"],
    }
    assert missing_required(Q, answers) == []
    assert missing_required(Q, {**answers, "AAA-01": "yes"}) == ["AAA-04"]
    assert missing_required(Q, {**answers, "AAA-05": "sglang"}) == ["AAA-06"]
    assert missing_required(Q, answers, sections=["BBB"]) == []


def test_errors_quote_option_labels_not_internal_codes():
    with translation.override("en"):
        exclusive = errors_of({"BBB-01": ["none", "iso27001"]})["BBB-01"][0]
        unknown = errors_of({"BBB-01": ["soc9"]})["BBB-01"][0]
    assert exclusive == "“None” cannot be combined with other options."
    assert "“ISO” (iso27001)" in unknown and "“None” (none)" in unknown


def test_a_penetration_test_date_in_the_future_is_refused():
    from pathlib import Path

    from django.utils import timezone

    from questionnaires.spec import load_questionnaire_file

    catalog = Path(__file__).resolve().parents[2] / "questionnaires" / "catalog"
    v1 = load_questionnaire_file(catalog / "ai-inference-isolation-v1.yaml")
    today = timezone.localdate()
    tomorrow = today + dt.timedelta(days=1)
    assert validate_answers(v1, {"ISO-05": today.isoformat()}).values["ISO-05"] == today
    with pytest.raises(AnswerValidationError) as refused:
        validate_answers(v1, {"ISO-05": tomorrow.isoformat()})
    with translation.override("en"):
        message = str(refused.value.errors["ISO-05"][0])
    assert message.startswith(f"{tomorrow.isoformat()} is in the future")
    # A date question that does not ask about the past takes any date.
    assert validate_answers(Q, {"BBB-02": tomorrow.isoformat()}).values["BBB-02"] == tomorrow
