"""A probe run, from request to end: queued inside the set-up's window and within its spend
ceiling, executed by the Celery task outside any transaction (progress written for the page to
poll, the result attached as PRB-02 evidence), and failed when it cannot finish or was
abandoned. Every end goes through `keys.probe_run_end`, which destroys the test keys."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Sequence

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.roles import Capability
from assessments.audit import audit_record
from assessments.models import Assessment, Channel, EvidenceFile
from assessments.services.evidence import evidence_add
from assessments.services.webhook_events import assessment_event
from core.errors import ConflictError, ServiceError
from core.queueing import publish_on_commit
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from ..endpoint import ProbeInputError
from ..keystore import KeyUnreadable, key_decrypt
from ..models import ProbeRun, ProbeRunStatus, ProbeSetup
from ..result import CHECKS, result_outcomes
from ..runner import (
    ProbeConfig,
    ProbeProgress,
    ProbeUnreachable,
    options_problems,
    probe_config_build,
    probe_run,
)
from .guards import (
    DECIDED_STATUSES,
    RUN_PENDING_STATUSES,
    probe_outbound_policy,
    problems_translated,
)
from .keys import probe_run_end
from .setup import tokens_spent_under

logger = logging.getLogger(__name__)

# Who may start a probe: whoever prepares assessments (assessors; owners hold every capability).
PROBE_RUN_CAPABILITIES = (Capability.EDIT_ASSESSMENT,)
# A page polls the progress; more than one write a second would only load the database.
PROGRESS_WRITE_INTERVAL_S = 1.0
# The Celery task that runs a probe (`tasks.py`, which imports these services), queued by name.
# The probe stops itself at PROBE_TIMEOUT_S; the task's limits only catch a probe stuck beyond
# that (a minute to record the result, then the hard limit).
PROBE_RUN_TASK = "probes.tasks.probe_run_task"
SOFT_TIME_LIMIT_S = settings.PROBE_TIMEOUT_S + 60
TIME_LIMIT_S = settings.PROBE_TIMEOUT_S + 120


@transaction.atomic
def probe_run_request(
    *,
    assessment: Assessment,
    actor: User,
    channel: str,
    checks: Sequence[str] | None = None,
    samples: int | None = None,
    prefix_tokens: int | None = None,
) -> ProbeRun:
    """Queue a probe of the endpoint the vendor set up, inside its authorised window, with a
    budget no larger than what is left of its spend ceiling (and PROBE_BUDGET_TOKENS)."""
    checks = list(checks) if checks is not None else list(CHECKS)
    samples = samples if samples is not None else settings.PROBE_SAMPLES
    prefix_tokens = prefix_tokens if prefix_tokens is not None else settings.PROBE_PREFIX_TOKENS
    problems = options_problems(
        checks=checks, samples=samples, prefix_tokens=prefix_tokens, budget_tokens=1
    )
    if problems:
        raise ServiceError(problems_translated(problems))
    if assessment.status in DECIDED_STATUSES:
        raise ConflictError({"probe": [_("The assessment is decided; it is not probed any more.")]})
    setup = ProbeSetup.objects.select_for_update().filter(assessment=assessment).first()
    if setup is None:
        raise ConflictError(
            {"probe": [_("The vendor has not set up and authorised a probe of this assessment.")]}
        )
    if not setup.keys_present:
        raise ConflictError(
            {
                "probe": [
                    _(
                        "The test keys were destroyed when the last probe ended; the vendor "
                        "must enter them again."
                    )
                ]
            }
        )
    now = timezone.now()
    if now < setup.window_starts_at:
        raise ConflictError({"probe": [_("The authorised window has not started yet.")]})
    if now >= setup.window_ends_at:
        raise ConflictError({"probe": [_("The authorised window has ended.")]})
    if ProbeRun.objects.filter(assessment=assessment, status__in=RUN_PENDING_STATUSES).exists():
        raise ConflictError({"probe": [_("A probe of this assessment is already running.")]})
    remaining = setup.spend_ceiling_tokens - tokens_spent_under(setup)
    if remaining <= 0:
        raise ConflictError({"probe": [_("The authorised spend ceiling is used up.")]})
    run = ProbeRun.objects.create(
        organization_id=assessment.organization_id,
        assessment=assessment,
        setup=setup,
        checks=[name for name in CHECKS if name in checks],
        samples=samples,
        prefix_tokens=prefix_tokens,
        budget_tokens=min(settings.PROBE_BUDGET_TOKENS, remaining),
        requested_by=actor,
        progress={"percent": 0, "check": None, "requests_sent": 0, "tokens_spent": 0},
    )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="probe.requested",
        actor=actor,
        channel=channel,
        detail={
            "probe_run": run.pk,
            "checks": run.checks,
            "budget_tokens": run.budget_tokens,
            "base_url": setup.base_url,
        },
    )
    publish_on_commit(PROBE_RUN_TASK, run.pk)
    return run


# -- executing (the task) ------------------------------------------------------------------


class _ProgressRecorder:
    """Writes the probe's progress on the run for a page to poll: at once before the first
    request (from then on the run is never retried), then at most once a second."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.first_written = False
        self.last_write = 0.0
        self.last_check: str | None = None

    def __call__(self, progress: ProbeProgress) -> None:
        now = time.monotonic()
        if (
            self.first_written
            and progress.check == self.last_check
            and now - self.last_write < PROGRESS_WRITE_INTERVAL_S
        ):
            return
        update = {
            "progress": {
                "percent": progress.percent,
                "check": progress.check,
                "requests_sent": progress.requests_sent,
                "requests_planned": progress.requests_planned,
                "tokens_spent": progress.tokens_spent,
                "checks_done": list(progress.checks_done),
            },
            "requests_sent": progress.requests_sent,
            "tokens_spent": progress.tokens_spent,
        }
        if not self.first_written:
            update["first_request_at"] = timezone.now()
        ProbeRun.objects.filter(pk=self.run_id, status=ProbeRunStatus.RUNNING).update(**update)
        self.first_written, self.last_write, self.last_check = True, now, progress.check


def probe_run_execute(*, probe_run_id: int) -> ProbeRun | None:
    """Run a queued probe and store its result. Returns None when the run no longer exists.

    Idempotent: a finished run is returned unchanged. A run found `running` starts again only
    if no request was sent yet. Once requests went out it is never repeated (that would spend
    the vendor's tokens twice): within the task's hard time limit its worker may still be
    probing — the broker hands an unacknowledged message out again after
    CELERY_VISIBILITY_TIMEOUT, alive worker or not — so it is left to that worker; past the
    limit no worker can be on it, and it fails (`probe_runs_fail_abandoned` does the same for a
    run whose message is gone). The probe takes minutes, so it runs outside any transaction.
    """
    with transaction.atomic():
        run = ProbeRun.objects.select_for_update().filter(pk=probe_run_id).first()
        if run is None or run.status in (ProbeRunStatus.DONE, ProbeRunStatus.FAILED):
            return run
        if run.status == ProbeRunStatus.RUNNING and run.first_request_at is not None:
            if not _abandoned(run, timezone.now()):
                return run  # another delivery is probing now
            interrupted = True
        else:
            interrupted = False
            setup = ProbeSetup.objects.select_for_update().get(pk=run.setup_id)
            config_or_error = _config_for(run, setup)
            run.status = ProbeRunStatus.RUNNING
            run.started_at = timezone.now()
            run.attempts += 1
            run.save(update_fields=["status", "started_at", "attempts"])
    if interrupted:
        probe_run_fail(probe_run_id=probe_run_id, error=INTERRUPTED)
        return ProbeRun.objects.get(pk=probe_run_id)
    if isinstance(config_or_error, str):
        probe_run_fail(probe_run_id=probe_run_id, error=config_or_error)
        return ProbeRun.objects.get(pk=probe_run_id)

    try:
        result = probe_run(config_or_error, on_progress=_ProgressRecorder(probe_run_id))
    except ProbeUnreachable as exc:
        probe_run_fail(probe_run_id=probe_run_id, error=str(exc))
        return ProbeRun.objects.get(pk=probe_run_id)

    with transaction.atomic():
        run = ProbeRun.objects.select_for_update().get(pk=probe_run_id)
        if run.status != ProbeRunStatus.RUNNING:
            return run  # failed meanwhile (time limit): keep what was recorded
        document = result.to_dict()
        run.status = ProbeRunStatus.DONE
        run.result = document
        run.tokens_spent = result.tokens_spent
        run.requests_sent = result.requests_sent
        run.finished_at = timezone.now()
        run.progress = {
            **run.progress,
            "percent": 100,
            "check": "done",
            "requests_sent": result.requests_sent,
            "tokens_spent": result.tokens_spent,
            "checks_done": list(result.checks),
        }
        run.evidence = _attach_result(run, document)
        run.save(
            update_fields=[
                "status",
                "result",
                "tokens_spent",
                "requests_sent",
                "finished_at",
                "progress",
                "evidence",
            ]
        )
        probe_run_end(
            run,
            finished=True,
            detail={
                "probe_run": run.pk,
                "results": result_outcomes(document),
                "tokens_spent": result.tokens_spent,
                "requests_sent": result.requests_sent,
                "evidence": run.evidence_id,
            },
        )
        webhooks_emit(
            [
                assessment_event(
                    run.assessment,
                    WebhookEvent.PROBE_FINISHED,
                    f"probe.finished:{run.pk}",
                    probe_run={
                        "id": run.pk,
                        "results": result_outcomes(document),
                        "tokens_spent": result.tokens_spent,
                    },
                )
            ]
        )
    return run


def _attach_result(run: ProbeRun, document: dict) -> EvidenceFile | None:
    """The result JSON as the assessment's probe evidence (PRB-02), through the one evidence
    path: stored like an upload, read by the `probe_result` parser, its parse stored, an audit
    event written. AVIA itself attaches it (the system channel, no person). None when the
    questionnaire asks for no probe result (version 1)."""
    assessment = Assessment.objects.select_related("questionnaire").get(pk=run.assessment_id)
    question = assessment.questionnaire.spec.probe_question
    if question is None:
        return None
    content = json.dumps(document, indent=2, ensure_ascii=False).encode("utf-8")
    upload = SimpleUploadedFile(
        f"probe-run-{run.pk}.json", content, content_type="application/json"
    )
    return evidence_add(
        assessment=assessment, question_code=question.code, upload=upload, channel=Channel.SYSTEM
    )


def _config_for(run: ProbeRun, setup: ProbeSetup) -> ProbeConfig | str:
    """The probe's configuration with the decrypted keys, or why it cannot run."""
    sealed_a, sealed_b = setup.key_a_ciphertext, setup.key_b_ciphertext
    if not setup.keys_present or sealed_a is None or sealed_b is None:
        return "the test keys are no longer stored"
    try:
        key_a, key_b = key_decrypt(sealed_a), key_decrypt(sealed_b)
    except KeyUnreadable as exc:
        return str(exc)
    try:
        return probe_config_build(
            base_url=setup.base_url,
            model=setup.model_name,
            declared_context=setup.declared_context,
            key_a=key_a,
            key_b=key_b,
            allow_http=settings.PROBE_ALLOW_HTTP,
            outbound=probe_outbound_policy(),
            checks=run.checks,
            samples=run.samples,
            prefix_tokens=run.prefix_tokens,
            budget_tokens=run.budget_tokens,
            rate_per_key=settings.PROBE_RATE_PER_KEY,
            timeout_s=settings.PROBE_TIMEOUT_S,
        )
    except ProbeInputError as exc:
        return str(exc)


INTERRUPTED = "the probe was interrupted after it had sent requests; it is not repeated"


def _abandoned(run: ProbeRun, now: dt.datetime) -> bool:
    """Running for longer than the task's hard time limit: no worker can still be on it."""
    started = run.started_at or run.first_request_at or run.created_at
    return now - started > _running_limit()


def _running_limit() -> dt.timedelta:
    # A little more than the hard limit, so that a probe ending right at it is not failed.
    return dt.timedelta(seconds=TIME_LIMIT_S + 10)


def probe_runs_fail_abandoned(*, now: dt.datetime | None = None) -> int:
    """Fail the runs left `running` past the task's hard time limit (their worker died and no
    message will come back for them); returns how many. Celery beat runs it every minute."""
    now = now or timezone.now()
    before = now - _running_limit()
    abandoned = list(
        ProbeRun.objects.filter(status=ProbeRunStatus.RUNNING)
        .filter(Q(started_at__lt=before) | Q(started_at__isnull=True, created_at__lt=before))
        .order_by("pk")
        .values_list("pk", flat=True)[:500]
    )
    for probe_run_id in abandoned:
        probe_run_fail(probe_run_id=probe_run_id, error=INTERRUPTED)
    return len(abandoned)


def probe_run_fail(*, probe_run_id: int, error: str) -> None:
    """Record a probe that cannot finish, with the reason, and destroy the keys. A finished
    run stays finished."""
    with transaction.atomic():
        run = ProbeRun.objects.select_for_update().filter(pk=probe_run_id).first()
        if run is None or run.status == ProbeRunStatus.DONE:
            return
        run.status, run.error = ProbeRunStatus.FAILED, error[:2000]
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        probe_run_end(
            run,
            finished=False,
            detail={"probe_run": run.pk, "error": error[:500], "tokens_spent": run.tokens_spent},
        )
    logger.warning("probe run %s failed: %s", probe_run_id, error)
