"""A rescore chunk scores its items together (one bulk scoring, a query count that does not grow
with the chunk), yet an assessment that cannot be scored fails alone, and a chunk delivered
again — after a worker died with the runs made but not scored, or after it finished — makes no
second run and counts nothing twice."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import OperationalError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessments.factories import critical_rule_ids
from assessments.models import (
    Assessment,
    AssessmentStatus,
    Channel,
    Review,
    RunStatus,
    ScoringRun,
)
from assessments.services.reassessment import reassessment_policy_for
from assessments.services.reviews import review_record
from assessments.services.scoring_runs import MAX_SCORING_ATTEMPTS
from portfolio.models import BatchStatus, ItemState, RescoreBatch, RescoreItem
from portfolio.selectors import batch_changes, batch_changes_page
from portfolio.services import rescore_batch_create, rescore_chunk_run
from tests.personas import member_of

from .conftest import V2, expected, outdated_assessments


@pytest.fixture
def outdated(catalog, personas):
    """Six Acme assessments scored with v1; all but the first approved (a rescore keeps the
    decision, and the vendor's due date counts from the approval)."""
    assessments = outdated_assessments(personas, 6)
    for assessment in assessments[1:]:
        review_record(
            assessment=assessment,
            member=member_of(personas.rex),
            decision="approved",
            acknowledged_findings=critical_rule_ids(assessment),
            channel=Channel.WEB,
        )
    return [Assessment.objects.get(pk=a.pk) for a in assessments]


def batch_of(personas, assessments):
    """A v2 batch of the assessments; its chunks are not run (the test runs them)."""
    batch = rescore_batch_create(
        member=member_of(personas.ava, personas.acme),
        ruleset_key=V2,
        channel=Channel.API,
        assessment_ids=[a.pk for a in assessments],
    )
    return batch, list(batch.items.order_by("pk").values_list("pk", flat=True))


def new_runs(assessment):
    return list(ScoringRun.objects.filter(assessment=assessment, ruleset__version="2"))


def assert_rescored_once(assessment):
    runs = new_runs(assessment)
    assert len(runs) == 1 and runs[0].status == RunStatus.SUCCEEDED, assessment.pk
    fresh = Assessment.objects.get(pk=assessment.pk)
    want = expected(fresh, V2)
    assert fresh.latest_run_id == runs[0].pk
    assert (fresh.risk_score, fresh.risk_tier) == (want["risk_score"], want["risk_tier"])
    assert sorted(runs[0].findings.values_list("rule_id", flat=True)) == want["rules"]
    assert fresh.status == assessment.status
    if fresh.status == AssessmentStatus.APPROVED:
        approved = Review.objects.get(assessment=fresh).created_at
        days = reassessment_policy_for(organization=fresh.organization).days_for(fresh.risk_tier)
        assert fresh.reassess_by == timezone.localdate(approved) + dt.timedelta(days=days)


def test_a_chunk_is_scored_in_a_number_of_queries_that_does_not_grow_with_it(outdated, personas):
    batch, items = batch_of(personas, outdated)

    # The first reads what a worker process keeps (the compiled ruleset); the last settles.
    assert rescore_chunk_run(batch_id=batch.pk, item_ids=items[:1]) == 1
    with CaptureQueriesContext(connection) as one:
        assert rescore_chunk_run(batch_id=batch.pk, item_ids=items[1:2]) == 1
    with CaptureQueriesContext(connection) as three:
        assert rescore_chunk_run(batch_id=batch.pk, item_ids=items[2:5]) == 3
    assert rescore_chunk_run(batch_id=batch.pk, item_ids=items[5:]) == 1

    assert len(one) == len(three), [q["sql"][:80] for q in three.captured_queries]
    for assessment in outdated:
        assert_rescored_once(assessment)
    assert RescoreBatch.objects.get(pk=batch.pk).status == BatchStatus.DONE
    # The impact is the rules' difference between the old run and the new one.
    for item in RescoreItem.objects.filter(batch=batch):
        before = set(item.before_run.findings.values_list("rule_id", flat=True))
        after = set(item.run.findings.values_list("rule_id", flat=True))
        assert (item.added, item.removed) == (sorted(after - before), sorted(before - after))
        assert item.state == ItemState.DONE and item.finished_at is not None


def test_an_assessment_that_cannot_be_scored_fails_alone(outdated, personas):
    batch, items = batch_of(personas, outdated)
    broken = outdated[2]
    # Moved back to draft behind the services' back: its run cannot finish.
    Assessment.objects.filter(pk=broken.pk).update(status="draft")

    assert rescore_chunk_run(batch_id=batch.pk, item_ids=items) == 6

    for assessment in outdated:
        if assessment != broken:
            assert_rescored_once(assessment)
    failed = RescoreItem.objects.get(batch=batch, assessment=broken)
    assert failed.state == ItemState.FAILED and "not possible" in failed.error
    (run,) = new_runs(broken)
    assert run.status == RunStatus.FAILED
    # The old result stays the assessment's result; the old run is kept.
    assert Assessment.objects.get(pk=broken.pk).latest_run_id == broken.latest_run_id
    assert RescoreBatch.objects.get(pk=batch.pk).status == BatchStatus.FAILED


def test_a_chunk_delivered_again_makes_no_second_run(outdated, personas, monkeypatch):
    batch, items = batch_of(personas, outdated)
    # The first delivery dies after making the runs, before their scores commit.
    with monkeypatch.context() as patched:

        def locked(**kwargs):
            raise OperationalError("database is locked")

        patched.setattr("portfolio.services.scoring_runs_execute", locked)
        with pytest.raises(OperationalError):
            rescore_chunk_run(batch_id=batch.pk, item_ids=items)
    made = {item.pk: item.run_id for item in RescoreItem.objects.filter(batch=batch)}
    assert None not in made.values()
    assert RescoreItem.objects.filter(batch=batch, state=ItemState.RUNNING).count() == 6

    assert rescore_chunk_run(batch_id=batch.pk, item_ids=items) == 6
    assert rescore_chunk_run(batch_id=batch.pk, item_ids=items) == 0  # and once more

    assert {item.pk: item.run_id for item in RescoreItem.objects.filter(batch=batch)} == made
    for assessment in outdated:
        assert_rescored_once(assessment)
    assert RescoreBatch.objects.get(pk=batch.pk).status == BatchStatus.DONE


def test_the_impact_is_ordered_and_paged_by_the_database_without_the_runs_documents(
    outdated, personas
):
    batch, items = batch_of(personas, outdated)
    assert rescore_chunk_run(batch_id=batch.pk, item_ids=items) == 6
    batch.refresh_from_db()

    with CaptureQueriesContext(connection) as read:
        changes = batch_changes(batch=batch)
    # Who got worse first (more tiers, then more points), then by vendor.
    assert [c.vendor for c in changes] == [
        c.vendor for c in sorted(changes, key=lambda c: (-c.tier_change, -c.score_change, c.vendor))
    ]
    assert {c.assessment_id for c in changes} == {a.pk for a in outdated}
    # A run's snapshots and a ruleset's rules stay in the database (a batch of 10,000 read
    # them all and took half a minute).
    (query,) = read.captured_queries
    for document in ("answers_snapshot", "evidence_snapshot", '"sections"', '"content"'):
        assert document not in query["sql"], document

    first, worse = batch_changes_page(batch=batch, number=1, per_page=4)
    second, _worse = batch_changes_page(batch=batch, number=2, per_page=4)
    assert list(first) + list(second) == changes
    assert first.paginator.count == 6
    assert worse == sum(1 for c in changes if c.tier_change > 0 or c.score_change > 0)


def test_a_chunk_that_keeps_killing_its_worker_fails_its_runs_instead_of_cycling(
    outdated, personas, monkeypatch
):
    batch, items = batch_of(personas, outdated[:2])
    with monkeypatch.context() as patched:

        def killed(**kwargs):  # the worker dies while scoring: the chunk's transaction is lost
            raise OperationalError("server closed the connection unexpectedly")

        patched.setattr("portfolio.services.scoring_runs_execute", killed)
        for _ in range(MAX_SCORING_ATTEMPTS):
            with pytest.raises(OperationalError):
                rescore_chunk_run(batch_id=batch.pk, item_ids=items)
    # Each attempt counted although its transaction was rolled back: the next one fails them.
    rescore_chunk_run(batch_id=batch.pk, item_ids=items)

    for item in RescoreItem.objects.filter(batch=batch).select_related("run"):
        assert item.run.status == RunStatus.FAILED
        assert f"interrupted {MAX_SCORING_ATTEMPTS} times" in item.run.error
        assert item.state == ItemState.FAILED
    assert RescoreBatch.objects.get(pk=batch.pk).status == BatchStatus.FAILED
