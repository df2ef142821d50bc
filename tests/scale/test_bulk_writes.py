"""`assessments.bulk.update_fields` writes what `save(update_fields=…)` writes, each row its own
values and no other row, on both databases (make test runs this file on SQLite and on
PostgreSQL): nested JSON, NULLs of a date, a number and a foreign key, and times to the
microsecond."""

import datetime as dt

import pytest

from assessments.bulk import update_fields
from assessments.models import Assessment, ScoringRun

FIELDS = ["answers_snapshot", "sections", "error", "finished_at", "duration_ms", "risk_score"]


def stored(run_id):
    run = ScoringRun.objects.get(pk=run_id)
    return {name: getattr(run, name) for name in FIELDS}


def changed(run, index):
    """Values of their own for the index-th run: no two runs get the same."""
    run.answers_snapshot = {"CTX-01": 1_000_000 + index, "nested": {"list": [index, "二", None]}}
    run.sections = {} if index % 2 else {"KV": {"fired": index}}
    run.error = f"“quoted” 'text' {index}\n; DROP TABLE"
    run.finished_at = dt.datetime(2026, 12, 3, 9, 30, index, 123456 + index, tzinfo=dt.UTC)
    run.duration_ms = None if index == 0 else index * 7
    run.risk_score = index
    return run


@pytest.fixture
def runs(scored_template):
    first = scored_template.latest_run
    return [first] + [
        ScoringRun.objects.create(
            assessment=scored_template, ruleset=first.ruleset, as_of=first.as_of
        )
        for _ in range(4)
    ]


def test_many_rows_are_written_as_save_writes_one(runs):
    by_save, by_bulk, untouched = runs[0], runs[1:4], runs[4]
    before = stored(untouched.pk)

    changed(ScoringRun.objects.get(pk=by_save.pk), 1).save(update_fields=FIELDS)
    update_fields(
        [changed(ScoringRun.objects.get(pk=run.pk), index) for index, run in enumerate(by_bulk)],
        FIELDS,
    )

    # The run saved with index 1 and the bulk-written run with index 1 hold the same values.
    assert stored(by_bulk[1].pk) == stored(by_save.pk)
    for index, run in enumerate(by_bulk):
        assert stored(run.pk) == {
            name: getattr(changed(ScoringRun(), index), name) for name in FIELDS
        }
    assert stored(untouched.pk) == before


def test_nulls_of_every_kind_of_column(scored_template):
    assessment = Assessment.objects.get(pk=scored_template.pk)
    assessment.latest_run, assessment.reassess_by, assessment.risk_score = None, None, None

    update_fields([assessment], ["latest_run", "reassess_by", "risk_score"])

    again = Assessment.objects.get(pk=scored_template.pk)
    assert (again.latest_run_id, again.reassess_by, again.risk_score) == (None, None, None)
    again.reassess_by = dt.date(2027, 2, 28)
    update_fields([again], ["reassess_by"])
    assert Assessment.objects.get(pk=scored_template.pk).reassess_by == dt.date(2027, 2, 28)


def test_a_row_given_twice_is_refused(runs):
    with pytest.raises(ValueError, match="twice"):
        update_fields([runs[1], ScoringRun.objects.get(pk=runs[1].pk)], ["error"])


def test_a_json_value_that_cannot_be_json_fails_as_save_fails(runs):
    run = ScoringRun.objects.get(pk=runs[1].pk)
    run.sections = {"when": dt.date(2026, 12, 3)}

    with pytest.raises(TypeError):
        run.save(update_fields=["sections"])
    with pytest.raises(TypeError):
        update_fields([run], ["sections"])
