"""Carrying out queued scoring runs — what the Celery tasks call.

Idempotent: the run rows are locked, a run that already succeeded is left alone, and findings
are replaced inside the same transaction (and unique per run and rule), so a redelivered task
never duplicates findings. One run or many, the same code: a batch reads and writes each kind
of row in one query, which is most of the cost of scoring (the rules themselves take well
under a millisecond).
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from questionnaires.validation import stored_values
from scoring.evidence import EvidenceParseResult, parse_evidence, stored_parse_result
from scoring.selectors import compiled_ruleset
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from ..audit import audit_event, audit_record, audit_record_many
from ..bulk import insert_rows, update_fields
from ..lifecycle import IllegalTransition, next_status
from ..models import (
    Answer,
    Assessment,
    AssessmentStatus,
    Channel,
    EvidenceFile,
    Finding,
    ReassessmentPolicy,
    RunStatus,
    ScoringRun,
)
from ..storage import evidence_storage
from .notices import notify_tier_changed
from .reassessment import last_approvals, reassess_by_for, reassessment_policy_for
from .webhook_events import assessment_event

logger = logging.getLogger(__name__)

# Every attempt at a run counts (`attempts`), even one whose worker was killed mid-way (out of
# memory, the hard time limit), which leaves the run `running` for the sweeper to queue again: a
# run that kills its worker every time would do so for ever. Above what retries alone can reach
# (a chunk's 1 + 3 tries, then the run's own 1 + 3) and a few lost deliveries.
MAX_SCORING_ATTEMPTS = 12


def evidence_results(
    assessment: Assessment, files: list[EvidenceFile]
) -> dict[str, list[EvidenceParseResult]]:
    """What each evidence file said when it was uploaded: scoring reads the parse stored then,
    so a page, a report and the score never hold two opinions of one file. A row without a
    usable stored parse (older data) is parsed again with the upload's own size limit."""
    results: dict[str, list[EvidenceParseResult]] = {}
    questions = assessment.questionnaire.spec.questions
    for evidence in files:
        try:
            result = stored_parse_result(evidence.parse_result)
        except ValueError:
            result = None
        if result is None or not evidence.parse_result:
            question = questions.get(evidence.question_code)
            with evidence_storage().open(evidence.storage_name, "rb") as handle:
                result = parse_evidence(
                    handle,
                    parser=(question.parser if question else None) or "startup_log",
                    source_name=evidence.original_name,
                    max_bytes=settings.EVIDENCE_MAX_BYTES,
                )
        results.setdefault(evidence.question_code, []).append(result)
    return results


def scoring_run_execute(*, run_id: int) -> ScoringRun | None:
    """Score the run's assessment. Returns None when the run no longer exists."""
    return scoring_runs_execute(run_ids=[run_id]).get(run_id)


def scoring_runs_claim(*, run_ids: Sequence[int]) -> None:
    """Count an attempt at each unfinished run (marking it running), and fail those tried
    MAX_SCORING_ATTEMPTS times already. Its own commit, before any scoring: an attempt whose
    worker is killed mid-way still counts. `scoring_runs_execute` claims its runs itself unless
    its caller, scoring inside a transaction of its own (a rescore chunk), claimed them first."""
    ids = sorted(set(run_ids))
    exhausted = ScoringRun.objects.filter(
        pk__in=ids,
        status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
        attempts__gte=MAX_SCORING_ATTEMPTS,
    ).values_list("pk", "attempts")
    for run_id, attempts in exhausted:
        scoring_run_fail(
            run_id=run_id,
            error=f"scoring was interrupted {attempts} times (the worker stopped before it "
            "finished: out of memory or the time limit?); rescore to try again",
        )
    ScoringRun.objects.filter(pk__in=ids, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
        status=RunStatus.RUNNING, attempts=F("attempts") + 1, dispatched_at=timezone.now()
    )


def scoring_runs_execute(*, run_ids: Sequence[int], claimed: bool = False) -> dict[int, ScoringRun]:
    """Score the assessments of several runs in one transaction, with a fixed number of
    queries whatever their number (answers, evidence, findings, runs, assessments and the
    audit trail each read or written in one go). Returns the runs that exist, by id.

    The same rules as for one run: a finished run is left alone, a run older than the
    assessment's latest is marked superseded, findings are replaced (never duplicated). An
    error fails the whole batch, so a caller with several runs retries them one by one
    (`tasks.score_assessment_runs`) to fail only the run that fails. `claimed`: the caller
    has counted this attempt already (`scoring_runs_claim`)."""
    started = time.perf_counter()
    ids = sorted(set(run_ids))
    if not claimed:
        scoring_runs_claim(run_ids=ids)
    with transaction.atomic():
        # Rows are locked in id order (runs, then assessments), so two batches cannot deadlock;
        # only these rows are locked (`of`), and the catalogue's contents are not read: the
        # compiled ruleset and the parsed questionnaire are cached per process by content hash.
        runs = list(
            ScoringRun.objects.select_for_update(of=("self",))
            .select_related("ruleset__questionnaire")
            .defer("ruleset__content", "ruleset__questionnaire__content")
            .filter(pk__in=ids)
            .order_by("pk")
        )
        found = {run.pk: run for run in runs}
        pending = [run for run in runs if run.status not in (RunStatus.SUCCEEDED, RunStatus.FAILED)]
        if not pending:
            return found  # redelivered messages: these runs are finished, one way or the other
        assessments = {
            assessment.pk: assessment
            for assessment in Assessment.objects.select_for_update(of=("self",))
            .select_related("questionnaire", "organization", "vendor")
            .defer("questionnaire__content")
            .filter(pk__in={run.assessment_id for run in pending})
            .order_by("pk")
        }
        # Of several pending runs of one assessment only the newest may decide it.
        newest = {}
        for run in pending:
            newest[run.assessment_id] = max(newest.get(run.assessment_id, 0), run.pk)
        superseded, scoring = [], []
        previous_tiers: dict[int, str] = {}  # each assessment's tier before this run
        for run in pending:
            latest = assessments[run.assessment_id].latest_run_id
            if (latest and latest > run.pk) or newest[run.assessment_id] > run.pk:
                superseded.append(run)
            else:
                scoring.append(run)
        answers: dict[int, list[tuple[str, object]]] = defaultdict(list)
        for assessment_id, code, value in Answer.objects.filter(
            assessment_id__in=[run.assessment_id for run in scoring]
        ).values_list("assessment_id", "question_code", "value"):
            answers[assessment_id].append((code, value))
        files: dict[int, list[EvidenceFile]] = defaultdict(list)
        for evidence in EvidenceFile.objects.filter(
            assessment_id__in=[run.assessment_id for run in scoring]
        ).order_by("uploaded_at", "id"):
            files[evidence.assessment_id].append(evidence)

        # Only a new submission moves the vendor's next-assessment date: a run scoring answers
        # already scored since they were submitted ("score again", a rescore batch) keeps it.
        earlier_runs = dict(
            ScoringRun.objects.filter(
                pk__in=[
                    assessments[run.assessment_id].latest_run_id
                    for run in scoring
                    if assessments[run.assessment_id].latest_run_id
                ]
            ).values_list("pk", "created_at")
        )
        new_submissions = {
            assessment.pk
            for assessment in (assessments[run.assessment_id] for run in scoring)
            if assessment.latest_run_id is None
            or assessment.submitted_at is None
            or earlier_runs[assessment.latest_run_id] < assessment.submitted_at
        }
        findings, events = [], []
        for run in scoring:
            assessment = assessments[run.assessment_id]
            engine = compiled_ruleset(
                run.ruleset_id, run.ruleset.content_hash, run.ruleset.questionnaire.content_hash
            )
            values = stored_values(assessment.questionnaire.spec, dict(answers[assessment.pk]))
            evidence = evidence_results(assessment, files[assessment.pk])
            result = engine.score(values, as_of=run.as_of, evidence=evidence)
            # Rows, not model instances: building and adapting ~20 instances per run cost more
            # than the rules. JSON columns take JSON text on both databases.
            findings += [
                (
                    run.pk,
                    f.rule_id,
                    f.severity,
                    f.points,
                    f.section,
                    position,
                    json.dumps([item.to_dict() for item in f.evidence]),
                    json.dumps(list(f.references)),
                )
                for position, f in enumerate(result.findings)
            ]
            result_dict = result.to_dict()
            run.answers_snapshot = {
                k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in values.items()
            }
            run.evidence_snapshot = result_dict["evidence"]
            run.sections = result_dict["sections"]
            run.risk_score, run.risk_tier = result.risk_score, result.risk_tier
            run.status, run.error = RunStatus.SUCCEEDED, ""
            assessment.status = next_status("scoring_succeeded", assessment.status)
            previous_tiers[assessment.pk] = assessment.risk_tier
            assessment.latest_run = run
            assessment.risk_score, assessment.risk_tier = run.risk_score, run.risk_tier
            events.append(
                audit_event(
                    organization=assessment.organization,
                    assessment=assessment,
                    action="scoring.succeeded",
                    channel=Channel.SYSTEM,
                    detail={
                        "run": run.pk,
                        "ruleset": run.ruleset.key,
                        "risk_score": run.risk_score,
                        "risk_tier": run.risk_tier,
                        "findings": len(result.findings),
                    },
                )
            )
        now = timezone.now()
        for run in superseded:
            # A newer run already decided (or is deciding) the assessment: not this one.
            run.status, run.error = RunStatus.FAILED, "superseded by a newer scoring run"
        for run in pending:
            run.finished_at = now
            run.duration_ms = int((time.perf_counter() - started) * 1000 / len(pending))
        Finding.objects.filter(run__in=scoring).delete()
        insert_rows(Finding, _FINDING_FIELDS, findings)
        update_fields(pending, _RUN_RESULT_FIELDS)
        decided = [assessments[run.assessment_id] for run in scoring]
        policies: dict[int, ReassessmentPolicy] = {}
        approvals = last_approvals(
            assessment.pk
            for assessment in decided
            if assessment.status == AssessmentStatus.APPROVED
        )
        for assessment in decided:
            assessment.updated_at = now
            if assessment.pk not in new_submissions and assessment.reassess_by is not None:
                continue
            if assessment.organization_id not in policies:
                policies[assessment.organization_id] = reassessment_policy_for(
                    organization=assessment.organization
                )
            assessment.reassess_by = reassess_by_for(
                assessment, policy=policies[assessment.organization_id], approvals=approvals
            )
        update_fields(
            decided,
            ["status", "latest_run", "risk_score", "risk_tier", "reassess_by", "updated_at"],
        )
        for run in scoring:
            notify_tier_changed(
                assessment=assessments[run.assessment_id],
                run=run,
                previous_tier=previous_tiers[run.assessment_id],
            )
        webhooks_emit(
            [
                assessment_event(
                    assessments[run.assessment_id],
                    WebhookEvent.ASSESSMENT_SCORED,
                    f"scored:run:{run.pk}",
                    run={
                        "id": run.pk,
                        "ruleset": run.ruleset.key,
                        "risk_score": run.risk_score,
                        "risk_tier": run.risk_tier,
                    },
                )
                for run in scoring
            ]
        )
        # Last, so that a chained audit trail's lock is held as briefly as possible.
        audit_record_many(events)
    return found


_FINDING_FIELDS = [
    Finding._meta.get_field(name)
    for name in (
        "run", "rule_id", "severity", "points", "section", "position", "evidence", "references",
    )
]  # fmt: skip
_RUN_RESULT_FIELDS = [
    "answers_snapshot",
    "evidence_snapshot",
    "sections",
    "risk_score",
    "risk_tier",
    "status",
    "error",
    "finished_at",
    "duration_ms",
]


def scoring_run_fail(*, run_id: int, error: str) -> None:
    """Record a run that cannot finish; the assessment keeps its answers, in `scoring_failed`."""
    with transaction.atomic():
        run = ScoringRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return
        run.status, run.error, run.finished_at = RunStatus.FAILED, error[:2000], timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        assessment = Assessment.objects.select_for_update().get(pk=run.assessment_id)
        newest = assessment.runs.order_by("-pk").values_list("pk", flat=True).first()
        if newest == run.pk:
            # Only the newest run decides the assessment's status; a late failure of an older
            # run (already replaced by a rescore) is recorded on the run alone.
            try:
                assessment.status = next_status("scoring_failed", assessment.status)
            except IllegalTransition:
                pass
            else:
                assessment.save(update_fields=["status", "updated_at"])
        audit_record(
            organization=assessment.organization,
            assessment=assessment,
            action="scoring.failed",
            channel=Channel.SYSTEM,
            detail={"run": run.pk, "error": error[:500]},
        )
    logger.error("scoring run %s failed: %s", run_id, error)
