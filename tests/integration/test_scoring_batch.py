"""Scoring in chunks on the real worker: every run scored once, none failed, the audit chain
whole."""

import pytest
from django.utils import timezone

from assessments.audit import audit_chain_verify
from assessments.models import Assessment, AuditEvent, Channel, Finding, RunStatus, ScoringRun
from assessments.services.submission import assessment_rescore
from assessments.tasks import score_assessment_runs
from bench.portfolio import copy_assessments
from tests.personas import member_of

from .steps import answered_assessment, queue_scoring, wait_for_run
from .worker import eventually, route_all_tasks_to


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_chunks_score_each_run_once(api, worker, personas):
    assessment_id = answered_assessment(api)["assessment"]
    first = queue_scoring(api, assessment_id)
    wait_for_run(api, worker, assessment_id, first, run_status="succeeded")
    template = Assessment.objects.get(pk=assessment_id)
    copy_assessments([template], copies=12, newest=timezone.now())
    # The rescores' one-run tasks go to a queue no worker reads: the chunks score the runs.
    route_all_tasks_to({"*": {"queue": f"{worker.queue}-unread"}})
    try:
        runs = [
            assessment_rescore(assessment=a, member=member_of(personas.ava), channel=Channel.API).pk
            for a in Assessment.objects.order_by("pk")
        ]
    finally:
        route_all_tasks_to({"*": {"queue": worker.queue}})
    assert ScoringRun.objects.filter(pk__in=runs, status=RunStatus.QUEUED).count() == len(runs)
    chunks = [runs[:7], runs[7:]]
    task_ids = [score_assessment_runs.apply_async(args=[chunk]).id for chunk in chunks]

    worker.wait_for_tasks(*task_ids, timeout=60)
    finished = ScoringRun.objects.filter(pk__in=runs, status=RunStatus.SUCCEEDED)
    eventually(lambda: finished.count() == len(runs), timeout=60, what="every run", worker=worker)

    assert not ScoringRun.objects.filter(pk__in=runs).exclude(status=RunStatus.SUCCEEDED)
    one = Finding.objects.filter(run_id=first).count()
    assert one and all(Finding.objects.filter(run_id=run).count() == one for run in runs)
    for run in runs:
        assert AuditEvent.objects.filter(action="scoring.succeeded", detail__run=run).count() == 1
    assert audit_chain_verify(organization=personas.acme).ok
