"""Writes of the probe: saving the vendor's set-up and authorisation, requesting a run,
executing it (what the Celery task calls), failing it, and destroying the keys.

Nothing is sent to an endpoint without a saved set-up whose signed authorisation covers the
moment (the window) and the spend (the ceiling). Keys are encrypted at rest, never written
to the audit trail, a log or a result, and destroyed when a run finishes or fails.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.roles import Capability
from assessments.audit import audit_record
from assessments.models import Assessment, AssessmentStatus, Channel, EvidenceFile, VendorLink
from assessments.services.answers import probe_consented
from assessments.services.evidence import evidence_add
from assessments.services.webhook_events import assessment_event
from core.errors import ConflictError, ServiceError
from core.outbound import OutboundPolicy, TemplateText
from core.queueing import publish_on_commit
from questionnaires.validation import visibility_for
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from .endpoint import ApiKey, ProbeInputError, endpoint_validate
from .keystore import KeyUnreadable, key_decrypt, key_encrypt
from .models import ProbeRun, ProbeRunStatus, ProbeSetup
from .result import CHECKS, result_outcomes
from .runner import (
    SAME_KEYS_MESSAGE,
    ProbeConfig,
    ProbeProgress,
    ProbeUnreachable,
    options_problems,
    probe_config_build,
    probe_run,
    target_problems,
)

logger = logging.getLogger(__name__)

# Who may start a probe: whoever prepares assessments (assessors; owners hold every capability).
PROBE_RUN_CAPABILITIES = (Capability.EDIT_ASSESSMENT,)
MAX_KEY_LENGTH = 1000
MAX_CEILING_TOKENS = 10_000_000_000
# A page polls the progress; more than one write a second would only load the database.
PROGRESS_WRITE_INTERVAL_S = 1.0
# The Celery task that runs a probe (`tasks.py`, which imports these services), queued by name.
# The probe stops itself at PROBE_TIMEOUT_S; the task's limits only catch a probe stuck beyond
# that (a minute to record the result, then the hard limit).
PROBE_RUN_TASK = "probes.tasks.probe_run_task"
SOFT_TIME_LIMIT_S = settings.PROBE_TIMEOUT_S + 60
TIME_LIMIT_S = settings.PROBE_TIMEOUT_S + 120
_PENDING = (ProbeRunStatus.QUEUED, ProbeRunStatus.RUNNING)
# A decided assessment is not probed any more: its result could no longer be scored.
_CLOSED = (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED)


def _translated(errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """The pure probe's messages (marked with gettext_noop) in the request's language."""
    return {
        field: [_translate(message) for message in messages] for field, messages in errors.items()
    }


def _translate(message: str) -> str:
    if isinstance(message, TemplateText):
        return _(message.template) % message.params
    return _(message)


def probe_outbound_policy() -> OutboundPolicy:
    """Where the probe may connect: public addresses and the operator's PROBE_ALLOWED_NETWORKS
    (for the web app, the worker and `manage.py probe` alike)."""
    return OutboundPolicy(allowed_networks=settings.PROBE_ALLOWED_NETWORKS)


# -- the set-up and its authorisation ------------------------------------------------------


def _in_utc_range(moment: dt.datetime) -> bool:
    """Whether a time can be stored: 9999-12-31 23:59 west of UTC (or 0001-01-01 east of it)
    is out of the range of a datetime once in UTC."""
    try:
        moment.astimezone(dt.UTC)
    except (OverflowError, ValueError):
        return False
    return True


@transaction.atomic
def probe_setup_save(
    *,
    assessment: Assessment,
    base_url: str,
    model_name: str,
    declared_context: int,
    key_a: str,
    key_b: str,
    signer_name: str,
    spend_ceiling_tokens: int,
    window_starts_at: dt.datetime,
    window_ends_at: dt.datetime,
    channel: str,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
) -> ProbeSetup:
    """Save (or replace) the probe set-up of `assessment`: the endpoint, the two test-tenant
    keys (encrypted) and the signed authorisation. Entered by the vendor through its link, or
    by a member on the vendor's behalf. Every problem is reported at once, by field."""
    if vendor_link is not None and vendor_link.assessment_id != assessment.pk:
        raise ServiceError({"vendor_link": [_("This link belongs to another assessment.")]})
    if assessment.status in _CLOSED:
        raise ConflictError({"probe": [_("The assessment is decided; it is not probed any more.")]})
    if vendor_link is not None and not probe_consented(assessment):
        # The vendor's own consent (PRB-01 = yes) comes before its endpoint and keys.
        raise ConflictError(
            {
                code: [_("Answer “yes” here first: the probe needs your consent.")]
                for code in consent_codes(assessment)
            }
            or {"probe": [_("This questionnaire has no isolation probe.")]}
        )
    if ProbeRun.objects.filter(assessment=assessment, status__in=_PENDING).exists():
        raise ConflictError(
            {"probe": [_("A probe of this assessment is running; wait until it ends.")]}
        )
    base_url, keys = probe_setup_check(
        base_url=base_url,
        model_name=model_name,
        declared_context=declared_context,
        key_a=key_a,
        key_b=key_b,
        signer_name=signer_name,
        spend_ceiling_tokens=spend_ceiling_tokens,
        window_starts_at=window_starts_at,
        window_ends_at=window_ends_at,
    )

    now = timezone.now()
    setup, created = ProbeSetup.objects.update_or_create(
        assessment=assessment,
        defaults={
            "organization_id": assessment.organization_id,
            "base_url": base_url,
            "model_name": model_name.strip(),
            "declared_context": declared_context,
            "signer_name": signer_name.strip(),
            "spend_ceiling_tokens": spend_ceiling_tokens,
            "window_starts_at": window_starts_at,
            "window_ends_at": window_ends_at,
            "entered_by": actor,
            "entered_by_link": vendor_link,
            "entered_via": channel,
            "entered_at": now,
            "key_a_ciphertext": key_encrypt(keys["key_a"]),
            "key_b_ciphertext": key_encrypt(keys["key_b"]),
            "keys_destroyed_at": None,
        },
    )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="probe.setup_saved",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
        # What was authorised, never the keys.
        detail={
            "base_url": base_url,
            "model": setup.model_name,
            "declared_context": declared_context,
            "signer_name": setup.signer_name,
            "spend_ceiling_tokens": spend_ceiling_tokens,
            "window_starts_at": window_starts_at.isoformat(),
            "window_ends_at": window_ends_at.isoformat(),
            "replaced": not created,
        },
    )
    return setup


def probe_setup_check(
    *,
    base_url: str,
    model_name: str,
    declared_context: int | None,
    key_a: str,
    key_b: str,
    signer_name: str,
    spend_ceiling_tokens: int | None,
    window_starts_at: dt.datetime | None,
    window_ends_at: dt.datetime | None,
) -> tuple[str, dict[str, ApiKey]]:
    """Every problem of a probe set-up at once, by field (ServiceError); else the base URL as
    validated and the two keys. Saves nothing: a form reports these beside its own errors."""
    errors: dict[str, list[str]] = {}
    try:
        base_url = endpoint_validate(
            base_url, allow_http=settings.PROBE_ALLOW_HTTP, policy=probe_outbound_policy()
        )
    except ProbeInputError as exc:
        errors.update(_translated(exc.errors))
    target = target_problems(model=model_name, declared_context=declared_context)
    if "model" in target:
        errors["model_name"] = target.pop("model")
    errors.update(_translated(target))
    keys: dict[str, ApiKey] = {}
    for field, value in (("key_a", key_a), ("key_b", key_b)):
        text = (value or "").strip()
        if not text:
            errors[field] = [_("Enter the API key of this test tenant.")]
        elif len(text) > MAX_KEY_LENGTH or any(ch.isspace() for ch in text):
            # The message never repeats the key.
            errors[field] = [_("This does not look like an API key (spaces, or too long).")]
        else:
            keys[field] = ApiKey(text)
    if len(keys) == 2 and keys["key_a"].same_as(keys["key_b"]):
        errors["key_b"] = [_(SAME_KEYS_MESSAGE)]
    if not (signer_name or "").strip():
        errors["signer_name"] = [_("Name the person who signs the authorisation.")]
    elif len(signer_name) > 200:
        errors["signer_name"] = [_("The name is longer than 200 characters.")]
    if not isinstance(spend_ceiling_tokens, int) or not (
        0 < spend_ceiling_tokens <= MAX_CEILING_TOKENS
    ):
        errors["spend_ceiling_tokens"] = [
            _("The spend ceiling must be a whole number of tokens between 1 and 10,000,000,000.")
        ]
    out_of_range = [
        name
        for name, moment in (
            ("window_starts_at", window_starts_at),
            ("window_ends_at", window_ends_at),
        )
        if moment is not None and not _in_utc_range(moment)
    ]
    if out_of_range:
        for name in out_of_range:
            errors[name] = [_("Enter a date between the years 2 and 9998.")]
    elif window_starts_at is None or window_ends_at is None:
        errors["window_ends_at"] = [_("Give the start and the end of the authorised window.")]
    elif window_ends_at <= window_starts_at:
        errors["window_ends_at"] = [_("The window must end after it starts.")]
    elif window_ends_at <= timezone.now():
        errors["window_ends_at"] = [_("The authorised window has already ended.")]
    if errors:
        raise ServiceError(errors)
    return base_url, keys


def consent_codes(assessment: Assessment) -> list[str]:
    """The questions whose answer decides whether the probe is asked for (PRB-01)."""
    spec = assessment.questionnaire.spec
    question = spec.probe_question
    if question is None or not question.show_if:
        return []
    by_identifier = {q.identifier: q.code for q in spec.iter_questions()}
    reads = visibility_for(spec).reads(question.code)
    return [by_identifier[name] for name in reads if name in by_identifier]


def tokens_spent_under(setup: ProbeSetup) -> int:
    """Prompt tokens the runs under this authorisation have spent (counted against its
    ceiling). Saving the set-up again is a new authorisation."""
    spent = ProbeRun.objects.filter(setup=setup, created_at__gte=setup.entered_at).aggregate(
        total=Sum("tokens_spent")
    )["total"]
    return spent or 0


# -- requesting a run ----------------------------------------------------------------------


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
        raise ServiceError(_translated(problems))
    if assessment.status in _CLOSED:
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
    if ProbeRun.objects.filter(assessment=assessment, status__in=_PENDING).exists():
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
        _run_ended(
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
        _run_ended(
            run,
            finished=False,
            detail={"probe_run": run.pk, "error": error[:500], "tokens_spent": run.tokens_spent},
        )
    logger.warning("probe run %s failed: %s", probe_run_id, error)


def _run_ended(run: ProbeRun, *, finished: bool, detail: dict[str, Any]) -> None:
    """The end of a run, finished or failed, inside the caller's transaction: the test keys are
    destroyed first (another run needs the vendor to enter them again), then the end is
    audited. Every path that ends a run comes here, so none can leave the keys behind."""
    probe_keys_destroy(setup=ProbeSetup.objects.select_for_update().get(pk=run.setup_id))
    event: dict[str, Any] = {
        "organization": run.assessment.organization,
        "assessment": run.assessment,
        "channel": Channel.SYSTEM,
        "detail": detail,
    }
    # (the action written out, for the scan of recorded actions: tests/web/test_audit_labels.py)
    if finished:
        audit_record(action="probe.finished", **event)
    else:
        audit_record(action="probe.failed", **event)


@transaction.atomic
def probe_keys_destroy(*, setup: ProbeSetup) -> None:
    """Overwrite the stored ciphertexts with random text of the same length, then null them,
    so that the row's old bytes are replaced before they are freed."""
    if not setup.keys_present:
        return
    fields = ["key_a_ciphertext", "key_b_ciphertext"]
    for name in fields:
        length = len(getattr(setup, name))
        setattr(setup, name, secrets.token_urlsafe(length)[:length])
    setup.save(update_fields=fields)
    for name in fields:
        setattr(setup, name, None)
    setup.keys_destroyed_at = timezone.now()
    setup.save(update_fields=[*fields, "keys_destroyed_at"])
    audit_record(
        organization=setup.organization,
        assessment=setup.assessment,
        action="probe.keys_destroyed",
        channel=Channel.SYSTEM,
    )
