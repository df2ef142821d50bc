"""Writes for reports: requesting one, rendering it (what the Celery task calls), failing it,
and checking an uploaded PDF against the reports of an organization.

A report is immutable once ready: `report_render` never renders a ready report again, the
file is written once under a new name and made read-only, and its SHA-256 is recorded in the
same transaction that marks it ready. Generating again means requesting a new report, which
gets a new number.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Organization
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.audit import audit_record
from assessments.models import Assessment, Channel, RunStatus, ScoringRun
from assessments.services.webhook_events import assessment_event
from core.db import create_once
from core.errors import ConflictError, ServiceError, StorageUnavailableError
from core.queueing import publish_on_commit
from core.storage import REMOTE_ERRORS, write_atomically
from outbox.links import site_url
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from .context import report_context
from .models import Report, ReportLanguage, ReportNumberSequence, ReportStatus
from .rendering import render_report
from .storage import report_storage

logger = logging.getLogger(__name__)

NUMBER_PREFIX = "AVIA"
# The Celery task that renders a report (`tasks.py`, which imports these services), queued by
# its name.
RENDER_TASK = "reports.tasks.render_report_task"
# Who may generate a report: whoever prepares assessments or decides on them (owners hold
# both). Every member may read and download the reports that exist.
REPORT_REQUEST_CAPABILITIES = (Capability.EDIT_ASSESSMENT, Capability.REVIEW)
# Deliveries of the render task that may start rendering a report. A delivery whose worker
# was killed mid-render (out of memory, the hard time limit) leaves the report `rendering`, and
# the sweeper queues it again; a report that kills its worker every time would cycle for ever.
# Above the task's own tries (1 + 3 retries on transient errors) and one interrupted delivery.
MAX_RENDER_ATTEMPTS = 5
# Reports are about 1 MB; anything much larger cannot be one of them.
VERIFY_MAX_BYTES = 25 * 1024 * 1024


class ReportIntegrityError(ConflictError):
    """A ready report's stored file no longer matches the SHA-256 recorded for it (or is gone):
    it is not served (409 in the API, a message on the pages)."""

    def __init__(self, number: str) -> None:
        super().__init__(
            {
                "file": [
                    _(
                        "The stored file of report %(number)s no longer matches its recorded "
                        "SHA-256 checksum, so it is not served. Generate a new report."
                    )
                    % {"number": number}
                ]
            }
        )


# -- requesting ----------------------------------------------------------------------------


def report_number_allocate(*, organization: Organization, year: int) -> str:
    """The organization's next report number of `year`, e.g. AVIA-2026-000123: numbers run per
    organization, so they tell nothing of another's volume. Call inside a transaction.

    The UPDATE ... SET last = last + 1 locks the row until the transaction ends, so concurrent
    requests queue up and never share a number; (organization, number) is unique too.
    """
    sequence = ReportNumberSequence.objects.filter(organization=organization, year=year)
    if not sequence.update(last=F("last") + 1):
        create_once(ReportNumberSequence, organization=organization, year=year)
        sequence.update(last=F("last") + 1)
    last = sequence.values_list("last", flat=True).get()
    return f"{NUMBER_PREFIX}-{year}-{last:06d}"


@transaction.atomic
def report_request(
    *,
    assessment: Assessment,
    language: str,
    member: OrgContext,
    channel: str,
    run: ScoringRun | None = None,
    include_threads: bool = False,
) -> Report:
    """Queue a report of `run` (default: the assessment's latest run) in `language`, for a
    member who prepares or decides on assessments; `include_threads`: with the clarification
    threads in an appendix."""
    member.require(*REPORT_REQUEST_CAPABILITIES)
    if assessment.organization_id != member.organization.pk:
        raise ServiceError({"assessment": [_("Unknown assessment.")]})
    actor = member.user
    errors: dict[str, list[str]] = {}
    if language not in ReportLanguage.values:
        errors["language"] = [_("Choose English (en) or Traditional Chinese (zh-hant).")]
    run = run if run is not None else assessment.latest_run
    if run is not None and run.assessment_id != assessment.pk:
        errors["run"] = [_("This scoring run belongs to another assessment.")]
    if errors:
        raise ServiceError(errors)
    if run is None or run.status != RunStatus.SUCCEEDED:
        raise ConflictError({"run": [_("A report needs a finished scoring run.")]})
    report = Report.objects.create(
        organization_id=assessment.organization_id,
        assessment=assessment,
        run=run,
        language=language,
        number=report_number_allocate(
            organization=assessment.organization,
            year=assessment.organization.local_date().year,
        ),
        requested_by=actor,
        include_threads=include_threads,
    )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="report.requested",
        actor=actor,
        channel=channel,
        detail={"report": report.number, "run": run.pk, "language": language},
    )
    publish_on_commit(RENDER_TASK, report.pk)
    return report


# -- rendering (the task) ------------------------------------------------------------------


def report_render(*, report_id: int) -> Report | None:
    """Render a queued report and store it. Returns None when the report no longer exists.

    Idempotent: a ready (or finally failed) report is returned unchanged, so a redelivered
    task does nothing. Rendering takes seconds, so it happens outside any transaction; the
    result is committed only if no other delivery finished first.
    """
    with transaction.atomic():
        report = Report.objects.select_for_update().filter(pk=report_id).first()
        if report is None or report.status in (ReportStatus.READY, ReportStatus.FAILED):
            return report
        exhausted = report.attempts >= MAX_RENDER_ATTEMPTS
        if not exhausted:
            report.status, report.error = ReportStatus.RENDERING, ""
            report.attempts += 1
            report.dispatched_at = timezone.now()
            report.save(update_fields=["status", "error", "attempts", "dispatched_at"])
    if exhausted:
        report_fail(
            report_id=report_id,
            error=(
                f"rendering was interrupted {report.attempts} times (the worker stopped before "
                "it finished: out of memory or the time limit?); request a new report"
            ),
        )
        report.refresh_from_db()
        return report

    run = ScoringRun.objects.select_related("ruleset").get(pk=report.run_id)
    rendered_at = timezone.now()
    context = report_context(
        run=run,
        language=report.language,
        number=report.number,
        generated_at=rendered_at,
        include_threads=report.include_threads,
    )
    rendered = render_report(context)
    digest = hashlib.sha256(rendered.pdf).hexdigest()

    storage = report_storage()
    name = write_atomically(
        storage,
        f"{report.organization_id}/{report.number}-{report.language}-{uuid.uuid4().hex[:8]}.pdf",
        [rendered.pdf],
    ).name
    try:
        with transaction.atomic():
            report = Report.objects.select_for_update().get(pk=report_id)
            if report.status != ReportStatus.RENDERING:
                # Another delivery finished (or failed) it meanwhile: keep what it did.
                transaction.on_commit(lambda: storage.delete(name))
                return report
            report.status = ReportStatus.READY
            report.sha256 = digest
            report.storage_name = name
            report.size = len(rendered.pdf)
            report.pages = rendered.pages
            report.rendered_at = rendered_at
            report.save(
                update_fields=[
                    "status",
                    "sha256",
                    "storage_name",
                    "size",
                    "pages",
                    "rendered_at",
                ]
            )
            audit_record(
                organization=report.organization,
                assessment=report.assessment,
                action="report.generated",
                channel=Channel.SYSTEM,
                detail={
                    "report": report.number,
                    "run": report.run_id,
                    "language": report.language,
                    "sha256": digest,
                    "pages": rendered.pages,
                    "size": len(rendered.pdf),
                },
            )
            webhooks_emit(
                [
                    assessment_event(
                        report.assessment,
                        WebhookEvent.REPORT_READY,
                        f"report.ready:{report.pk}",
                        report={
                            "id": report.pk,
                            "number": report.number,
                            "language": report.language,
                            "sha256": digest,
                            "pages": rendered.pages,
                            "url": site_url("reports:download", report.pk),
                        },
                    )
                ]
            )
    except BaseException:
        storage.delete(name)
        raise
    return report


def report_fail(*, report_id: int, error: str) -> None:
    """Record a report that cannot be rendered, with the reason. A ready report stays ready."""
    with transaction.atomic():
        report = Report.objects.select_for_update().filter(pk=report_id).first()
        if report is None or report.status == ReportStatus.READY:
            return
        report.status, report.error = ReportStatus.FAILED, error[:2000]
        report.save(update_fields=["status", "error"])
        audit_record(
            organization=report.organization,
            assessment=report.assessment,
            action="report.failed",
            channel=Channel.SYSTEM,
            detail={"report": report.number, "error": error[:500]},
        )
    logger.error("report %s failed: %s", report_id, error)


# -- reading and verifying -----------------------------------------------------------------


def report_file(*, report: Report) -> bytes:
    """The stored PDF of a ready report, checked against its recorded SHA-256."""
    if not report.is_ready:
        raise ConflictError({"status": [_("The report is not ready.")]})
    try:
        with report_storage().open(report.storage_name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        logger.error("report %s: the stored file is missing", report.number)
        raise ReportIntegrityError(report.number) from None
    except REMOTE_ERRORS as exc:
        logger.error("report %s: the object store failed: %s", report.number, exc)
        raise StorageUnavailableError(
            {"file": [_("The report cannot be read now (the file store cannot be reached).")]}
        ) from exc
    if hashlib.sha256(data).hexdigest() != report.sha256:
        logger.error("report %s: the stored file does not match its SHA-256", report.number)
        raise ReportIntegrityError(report.number)
    return data


@dataclass(frozen=True)
class ReportVerification:
    sha256: str
    report: Report | None  # None: not an unaltered AVIA report of this organization

    @property
    def matched(self) -> bool:
        return self.report is not None


# A PDF starts with "%PDF-" within its first 1024 bytes (ISO 32000-1, 7.5.2, as readers accept).
PDF_HEADER_WINDOW = 1024


def report_verify(*, organization: Organization, uploaded_file: UploadedFile) -> ReportVerification:
    """Is `uploaded_file` byte for byte one of this organization's ready reports?

    Matched by SHA-256 within the organization only: another organization's report is
    "not found", exactly like a file that was never an AVIA report.
    """
    if uploaded_file.size is not None and uploaded_file.size > VERIFY_MAX_BYTES:
        raise ServiceError(
            {"file": [_("This file is too large to be an AVIA report.")]},
        )
    digest = hashlib.sha256()
    head = b""
    for chunk in uploaded_file.chunks():
        if len(head) < PDF_HEADER_WINDOW:
            head += chunk[: PDF_HEADER_WINDOW - len(head)]
        digest.update(chunk)
    if b"%PDF-" not in head:
        # Said plainly rather than "not found": the reader picked the wrong file.
        raise ServiceError(
            {
                "file": [
                    _(
                        "This file is not a PDF, so it cannot be an AVIA report. Choose the "
                        "report's PDF file (its name ends in .pdf)."
                    )
                ]
            },
        )
    sha256 = digest.hexdigest()
    report = (
        Report.objects.filter(organization=organization, sha256=sha256, status=ReportStatus.READY)
        .select_related("assessment__vendor", "run__ruleset")
        .first()
    )
    return ReportVerification(sha256=sha256, report=report)
