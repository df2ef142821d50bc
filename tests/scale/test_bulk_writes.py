"""`assessments.bulk.update_fields` writes what `save(update_fields=…)` writes, on both
databases (make test runs this file on SQLite and on PostgreSQL): nested JSON, NULLs of a
date, a foreign key and a JSON column, and times to the microsecond."""

import datetime as dt

from assessments.bulk import update_fields
from assessments.models import Assessment, ScoringRun

FIELDS = ["answers_snapshot", "sections", "error", "finished_at", "duration_ms", "risk_score"]


def stored(run_id):
    run = ScoringRun.objects.get(pk=run_id)
    return {name: getattr(run, name) for name in FIELDS}


def test_many_rows_are_written_as_save_writes_one(scored_template):
    first = scored_template.latest_run
    second = ScoringRun.objects.create(
        assessment=scored_template, ruleset=first.ruleset, as_of=first.as_of
    )
    moment = dt.datetime(2026, 12, 3, 9, 30, 15, 123456, tzinfo=dt.UTC)
    by_save, by_bulk = ScoringRun.objects.get(pk=first.pk), ScoringRun.objects.get(pk=second.pk)
    for run, text in ((by_save, "save"), (by_bulk, "bulk")):
        run.answers_snapshot = {"CTX-01": 1_000_000, "nested": {"list": [1, "二", None]}}
        run.sections = {}
        run.error = f"“quoted” 'text' from {text}\n; DROP TABLE"
        run.finished_at = moment
        run.duration_ms = None
        run.risk_score = 0

    by_save.save(update_fields=FIELDS)
    update_fields([by_bulk], FIELDS)

    saved, bulk = stored(first.pk), stored(second.pk)
    assert bulk["error"] == saved["error"].replace("save", "bulk")
    assert {**bulk, "error": ""} == {**saved, "error": ""}
    assert bulk["finished_at"] == moment and bulk["duration_ms"] is None


def test_nulls_of_every_kind_of_column(scored_template):
    assessment = Assessment.objects.get(pk=scored_template.pk)
    assessment.latest_run, assessment.reassess_by, assessment.risk_score = None, None, None

    update_fields([assessment], ["latest_run", "reassess_by", "risk_score"])

    again = Assessment.objects.get(pk=scored_template.pk)
    assert (again.latest_run_id, again.reassess_by, again.risk_score) == (None, None, None)
    again.reassess_by = dt.date(2027, 2, 28)
    update_fields([again], ["reassess_by"])
    assert Assessment.objects.get(pk=scored_template.pk).reassess_by == dt.date(2027, 2, 28)
