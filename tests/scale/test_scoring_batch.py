"""Scoring many runs in one transaction: the same results as one by one, a query count that does
not grow with the batch, and a failing run that fails alone."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessments.audit import audit_chain_verify
from assessments.models import Assessment, AuditEvent, Channel, Finding, RunStatus, ScoringRun
from assessments.services.scoring_runs import scoring_run_execute, scoring_runs_execute
from assessments.services.submission import assessment_rescore
from assessments.tasks import score_assessment_runs
from bench.portfolio import copy_assessments
from tests.personas import member_of


def queued_rescores(template, personas, number):
    """`number` scored copies of the template, each with a rescore queued (not yet run)."""
    copy_assessments([template], copies=number, newest=timezone.now())
    copies = Assessment.objects.exclude(pk=template.pk).order_by("pk")
    return [
        assessment_rescore(assessment=a, member=member_of(personas.ava), channel=Channel.API).pk
        for a in copies
    ]


def outcome(run_id):
    run = ScoringRun.objects.get(pk=run_id)
    findings = list(Finding.objects.filter(run=run).values_list("rule_id", "points", "evidence"))
    return run.status, run.risk_score, run.risk_tier, run.sections, findings


def test_a_batch_scores_each_run_as_scoring_it_alone_does(scored_template, personas):
    runs = queued_rescores(scored_template, personas, 4)

    scoring_run_execute(run_id=runs[0])
    scoring_runs_execute(run_ids=runs[1:])

    alone = outcome(runs[0])
    assert alone[0] == "succeeded" and alone[4]
    assert alone[1:] == outcome(scored_template.latest_run_id)[1:]
    for run in runs[1:]:
        assert outcome(run) == alone
    for assessment in Assessment.objects.exclude(pk=scored_template.pk):
        assert assessment.status == "scored" and assessment.latest_run_id in runs
    events = AuditEvent.objects.filter(action="scoring.succeeded", detail__run__in=runs)
    assert sorted(e.detail["run"] for e in events) == sorted(runs)
    # One INSERT for the batch's events, chained like events written one by one.
    assert audit_chain_verify(organization=personas.acme).ok


def test_the_queries_of_a_batch_do_not_grow_with_it(scored_template, personas):
    runs = queued_rescores(scored_template, personas, 10)

    with CaptureQueriesContext(connection) as two:
        scoring_runs_execute(run_ids=runs[:2])
    with CaptureQueriesContext(connection) as eight:
        scoring_runs_execute(run_ids=runs[2:])

    assert len(two) == len(eight), [q["sql"][:80] for q in eight.captured_queries]


def test_a_redelivered_batch_changes_nothing(scored_template, personas):
    runs = queued_rescores(scored_template, personas, 3)
    scoring_runs_execute(run_ids=runs)
    before = [outcome(run) for run in runs]
    findings = Finding.objects.count()

    scoring_runs_execute(run_ids=runs)

    assert [outcome(run) for run in runs] == before
    assert Finding.objects.count() == findings


def test_of_two_runs_of_one_assessment_only_the_newer_decides(scored_template, personas):
    (older,) = queued_rescores(scored_template, personas, 1)
    assessment = ScoringRun.objects.get(pk=older).assessment
    newer = ScoringRun.objects.create(
        assessment=assessment, ruleset_id=ScoringRun.objects.get(pk=older).ruleset_id,
        as_of=ScoringRun.objects.get(pk=older).as_of,
    )  # fmt: skip

    scoring_runs_execute(run_ids=[newer.pk, older])

    assert ScoringRun.objects.get(pk=older).status == RunStatus.FAILED
    assert "superseded" in ScoringRun.objects.get(pk=older).error
    assessment.refresh_from_db()
    assert assessment.latest_run_id == newer.pk


def test_a_run_that_fails_fails_alone(scored_template, personas, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    runs = queued_rescores(scored_template, personas, 3)
    # An assessment moved back to draft behind the services' back: its run cannot finish.
    broken = ScoringRun.objects.get(pk=runs[1]).assessment
    Assessment.objects.filter(pk=broken.pk).update(status="draft")

    score_assessment_runs.apply(args=[runs]).get()

    assert [ScoringRun.objects.get(pk=run).status for run in runs] == [
        "succeeded", "failed", "succeeded"
    ]  # fmt: skip
    assert "not possible" in ScoringRun.objects.get(pk=runs[1]).error
