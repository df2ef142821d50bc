"""Carrying out a queued scoring run — what the Celery task calls.

Idempotent: the run row is locked, a run that already succeeded is left alone, and findings
are replaced inside the same transaction (and unique per run and rule), so a redelivered task
never duplicates findings.
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from scoring.engine import CompiledRuleset
from scoring.evidence import EvidenceParseResult, parse_evidence, stored_parse_result

from .audit import audit_record
from .lifecycle import IllegalTransition, next_status
from .models import Assessment, Channel, Finding, RunStatus, ScoringRun
from .reassessment import reassess_by_for
from .services import answer_values
from .storage import evidence_storage

logger = logging.getLogger(__name__)


@lru_cache(maxsize=16)
def _compiled(ruleset_pk: int, ruleset_hash: str, questionnaire_hash: str) -> CompiledRuleset:
    """Compiled once per worker process and ruleset version (content hashes key the cache)."""
    from scoring.models import Ruleset

    ruleset = Ruleset.objects.select_related("questionnaire").get(pk=ruleset_pk)
    return CompiledRuleset(ruleset.spec, ruleset.questionnaire.spec)


def _evidence_results(assessment: Assessment) -> dict[str, list[EvidenceParseResult]]:
    """What each evidence file said when it was uploaded: scoring reads the parse stored then,
    so a page, a report and the score never hold two opinions of one file. A row without a
    usable stored parse (older data) is parsed again with the upload's own size limit."""
    results: dict[str, list[EvidenceParseResult]] = {}
    questions = assessment.questionnaire.spec.questions
    for evidence in assessment.evidence.all():
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
    started = time.perf_counter()
    # Counted (and marked running) in its own transaction, so a failed attempt still counts.
    ScoringRun.objects.filter(pk=run_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
        status=RunStatus.RUNNING, attempts=F("attempts") + 1, dispatched_at=timezone.now()
    )
    with transaction.atomic():
        run = (
            ScoringRun.objects.select_for_update()
            .select_related("ruleset__questionnaire", "assessment__questionnaire")
            .filter(pk=run_id)
            .first()
        )
        if run is None:
            return None
        if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
            return run  # a redelivered message: this run is finished, one way or the other
        assessment = Assessment.objects.select_for_update().get(pk=run.assessment_id)
        if assessment.latest_run_id and assessment.latest_run_id > run.pk:
            # A newer run already decided the assessment; this one must not overwrite it.
            run.status, run.error = RunStatus.FAILED, "superseded by a newer scoring run"
            run.finished_at = timezone.now()
            run.save(update_fields=["status", "error", "finished_at"])
            return run
        engine = _compiled(
            run.ruleset_id, run.ruleset.content_hash, run.ruleset.questionnaire.content_hash
        )
        values = answer_values(assessment)
        evidence = _evidence_results(assessment)
        result = engine.score(values, as_of=run.as_of, evidence=evidence)
        run.findings.all().delete()
        Finding.objects.bulk_create(
            Finding(
                run=run,
                rule_id=f.rule_id,
                severity=f.severity,
                points=f.points,
                section=f.section,
                position=position,
                evidence=[item.to_dict() for item in f.evidence],
                references=list(f.references),
            )
            for position, f in enumerate(result.findings)
        )
        result_dict = result.to_dict()
        run.answers_snapshot = {
            k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in values.items()
        }
        run.evidence_snapshot = result_dict["evidence"]
        run.sections = result_dict["sections"]
        run.risk_score, run.risk_tier = result.risk_score, result.risk_tier
        run.status, run.error = RunStatus.SUCCEEDED, ""
        run.finished_at = timezone.now()
        run.duration_ms = int((time.perf_counter() - started) * 1000)
        run.save()
        assessment.status = next_status("scoring_succeeded", assessment.status)
        assessment.latest_run = run
        assessment.risk_score, assessment.risk_tier = run.risk_score, run.risk_tier
        assessment.reassess_by = reassess_by_for(assessment)
        assessment.save(
            update_fields=[
                "status",
                "latest_run",
                "risk_score",
                "risk_tier",
                "reassess_by",
                "updated_at",
            ]
        )
        audit_record(
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
    return run


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
