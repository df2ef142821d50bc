"""Writes for reports: requesting one, rendering it (what the Celery task calls), failing it,
and checking an uploaded PDF against the reports of an organization.

A report is immutable once ready: `report_render` never renders a ready report again, the
file is written once under a new name and made read-only, and its SHA-256 is recorded in the
same transaction that marks it ready. Generating again means requesting a new report, which
gets a new number.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

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
from core.errors import ConflictError, ForbiddenError, ServiceError, StorageUnavailableError
from core.queueing import publish_on_commit
from core.storage import REMOTE_ERRORS, write_atomically
from outbox.links import site_url
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from .context import report_context
from .models import (
    GeneratedDocument,
    PortfolioKind,
    PortfolioReport,
    Report,
    ReportLanguage,
    ReportNumberSequence,
    ReportStatus,
)
from .portfolio_context import (
    PreviousReport,
    consultancy_overview_context,
    portfolio_report_context,
)
from .rendering import RenderedReport, render_portfolio_report, render_report
from .storage import report_storage

logger = logging.getLogger(__name__)

NUMBER_PREFIX = "AVIA"
# The Celery task that renders a report (`tasks.py`, which imports these services), queued by
# its name.
RENDER_TASK = "reports.tasks.render_report_task"
PORTFOLIO_RENDER_TASK = "reports.tasks.render_portfolio_report_task"
# Who may generate a report: whoever prepares assessments or decides on them (owners hold
# both). Every member may read and download the reports that exist.
REPORT_REQUEST_CAPABILITIES = (Capability.EDIT_ASSESSMENT, Capability.REVIEW)
# Deliveries of the render task that may start rendering a report. A delivery whose worker
# was killed mid-render (out of memory, the hard time limit) leaves the report `rendering`, and
# the sweeper queues it again; a report that kills its worker every time would cycle for ever.
# Above the task's own tries (1 + 3 retries on transient errors) and one interrupted delivery.
MAX_RENDER_ATTEMPTS = 5
# The documents rendered, stored and verified the same way (`_document_render`).
Document = TypeVar("Document", Report, PortfolioReport)
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
    task does nothing (`_document_render`)."""

    def render(
        report: Report, rendered_at: dt.datetime
    ) -> tuple[RenderedReport, dict[str, object]]:
        run = ScoringRun.objects.select_related("ruleset").get(pk=report.run_id)
        context = report_context(
            run=run,
            language=report.language,
            number=report.number,
            generated_at=rendered_at,
            include_threads=report.include_threads,
        )
        return render_report(context), {}

    def ready(report: Report) -> None:
        audit_record(
            organization=report.organization,
            assessment=report.assessment,
            action="report.generated",
            channel=Channel.SYSTEM,
            detail={"run": report.run_id, **_generated(report)},
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
                        "sha256": report.sha256,
                        "pages": report.pages,
                        "url": site_url("reports:download", report.pk),
                    },
                )
            ]
        )

    return _document_render(
        Report,
        report_id,
        render,
        ready,
        lambda error: report_fail(report_id=report_id, error=error),
    )


def _generated(document: GeneratedDocument) -> dict[str, object]:
    """What the audit trail records of a generated document's file."""
    return {
        "report": document.number,
        "language": document.language,
        "sha256": document.sha256,
        "pages": document.pages,
        "size": document.size,
    }


def _document_render(
    model: type[Document],
    document_id: int,
    render: Callable[[Document, dt.datetime], tuple[RenderedReport, dict[str, object]]],
    ready: Callable[[Document], None],
    fail: Callable[[str], None],
) -> Document | None:
    """Render a queued document with `render` (its PDF, and fields to save with it), store the
    file, record its SHA-256 and call `ready` in the transaction that marks it ready.

    Idempotent: a ready (or finally failed) document is returned unchanged. Rendering takes
    seconds, so it happens outside any transaction; the result is committed only if no other
    delivery finished first.
    """
    with transaction.atomic():
        document = model.objects.select_for_update().filter(pk=document_id).first()
        if document is None or document.status in (ReportStatus.READY, ReportStatus.FAILED):
            return document
        exhausted = document.attempts >= MAX_RENDER_ATTEMPTS
        if not exhausted:
            document.status, document.error = ReportStatus.RENDERING, ""
            document.attempts += 1
            document.dispatched_at = timezone.now()
            document.save(update_fields=["status", "error", "attempts", "dispatched_at"])
    if exhausted:
        fail(
            f"rendering was interrupted {document.attempts} times (the worker stopped before "
            "it finished: out of memory or the time limit?); request a new report"
        )
        document.refresh_from_db()
        return document

    rendered_at = timezone.now()
    rendered, extra = render(document, rendered_at)
    saved: list[str] = ["status", "sha256", "storage_name", "size", "pages", "rendered_at"]
    saved += extra.keys()
    digest = hashlib.sha256(rendered.pdf).hexdigest()

    storage = report_storage()
    name = write_atomically(
        storage,
        f"{document.organization_id}/{document.number}-{document.language}-{uuid.uuid4().hex[:8]}.pdf",
        [rendered.pdf],
    ).name
    try:
        with transaction.atomic():
            document = model.objects.select_for_update().get(pk=document_id)
            if document.status != ReportStatus.RENDERING:
                # Another delivery finished (or failed) it meanwhile: keep what it did.
                transaction.on_commit(lambda: storage.delete(name))
                return document
            document.status = ReportStatus.READY
            document.sha256 = digest
            document.storage_name = name
            document.size = len(rendered.pdf)
            document.pages = rendered.pages
            document.rendered_at = rendered_at
            for field, value in extra.items():
                setattr(document, field, value)
            document.save(update_fields=saved)
            ready(document)
    except BaseException:
        storage.delete(name)
        raise
    return document


def report_fail(*, report_id: int, error: str) -> None:
    """Record a report that cannot be rendered, with the reason. A ready report stays ready."""
    _document_fail(
        Report,
        report_id,
        error,
        lambda report: audit_record(
            organization=report.organization,
            assessment=report.assessment,
            action="report.failed",
            channel=Channel.SYSTEM,
            detail={"report": report.number, "error": error[:500]},
        ),
    )


def _document_fail(
    model: type[Document], document_id: int, error: str, failed: Callable[[Document], object]
) -> None:
    with transaction.atomic():
        document = model.objects.select_for_update().filter(pk=document_id).first()
        if document is None or document.status == ReportStatus.READY:
            return
        document.status, document.error = ReportStatus.FAILED, error[:2000]
        document.save(update_fields=["status", "error"])
        failed(document)
    logger.error("%s %s failed: %s", model._meta.verbose_name, document_id, error)


# -- portfolio reports ---------------------------------------------------------------------


@transaction.atomic
def portfolio_report_request(
    *,
    member: OrgContext,
    language: str,
    channel: str,
    kind: str = PortfolioKind.ORGANIZATION,
) -> PortfolioReport:
    """Queue a portfolio report of the member's organization in `language` (`kind`: or, for a
    consultancy, its overview across its clients): every member who may read its assessments
    may ask for one."""
    member.require(Capability.VIEW)
    errors: dict[str, list[str]] = {}
    if language not in ReportLanguage.values:
        errors["language"] = [_("Choose English (en) or Traditional Chinese (zh-hant).")]
    if kind not in PortfolioKind.values:
        errors["kind"] = [_("Unknown kind of portfolio report.")]
    if errors:
        raise ServiceError(errors)
    if kind == PortfolioKind.CONSULTANCY and not member.organization.is_consultancy:
        # As for opening a client workspace: not something this organization may do (403).
        raise ForbiddenError({"kind": [_("Only a consultancy has an overview across clients.")]})
    organization = member.organization
    report = PortfolioReport.objects.create(
        organization=organization,
        kind=kind,
        language=language,
        number=report_number_allocate(
            organization=organization, year=organization.local_date().year
        ),
        requested_by=member.user,
    )
    audit_record(
        organization=organization,
        action="portfolio_report.requested",
        actor=member.user,
        channel=channel,
        detail={"report": report.number, "kind": kind, "language": language},
    )
    publish_on_commit(PORTFOLIO_RENDER_TASK, report.pk)
    return report


def portfolio_report_render(*, report_id: int) -> PortfolioReport | None:
    """Render a queued portfolio report (what its Celery task calls): the organization as it
    stands now, and what changed since its previous ready portfolio report of the same kind."""

    def render(
        report: PortfolioReport, rendered_at: dt.datetime
    ) -> tuple[RenderedReport, dict[str, object]]:
        organization = Organization.objects.get(pk=report.organization_id)
        if report.kind == PortfolioKind.CONSULTANCY:
            # Counted when rendered: a client whose engagement ended since is left out.
            overview, counted = consultancy_overview_context(
                consultancy=organization,
                language=report.language,
                number=report.number,
                generated_at=rendered_at,
            )
            return render_portfolio_report(overview), {"figures": counted}
        previous = (
            PortfolioReport.objects.filter(
                organization=organization,
                kind=report.kind,
                status=ReportStatus.READY,
                rendered_at__lt=rendered_at,
            )
            .exclude(pk=report.pk)
            .order_by("-rendered_at", "-pk")
            .first()
        )
        context, figures = portfolio_report_context(
            organization=organization,
            language=report.language,
            number=report.number,
            generated_at=rendered_at,
            previous=(
                PreviousReport(previous.number, previous.rendered_at, previous.figures)
                if previous is not None and previous.rendered_at is not None
                else None
            ),
        )
        return render_portfolio_report(context), {"figures": figures, "previous": previous}

    def ready(report: PortfolioReport) -> None:
        audit_record(
            organization=report.organization,
            action="portfolio_report.generated",
            channel=Channel.SYSTEM,
            detail={"kind": report.kind, **_generated(report)},
        )

    return _document_render(
        PortfolioReport,
        report_id,
        render,
        ready,
        lambda error: portfolio_report_fail(report_id=report_id, error=error),
    )


def portfolio_report_fail(*, report_id: int, error: str) -> None:
    """Record a portfolio report that cannot be rendered, with the reason."""
    _document_fail(
        PortfolioReport,
        report_id,
        error,
        lambda report: audit_record(
            organization=report.organization,
            action="portfolio_report.failed",
            channel=Channel.SYSTEM,
            detail={"report": report.number, "error": error[:500]},
        ),
    )


# -- reading and verifying -----------------------------------------------------------------


def report_file(*, report: GeneratedDocument) -> bytes:
    """The stored PDF of a ready report (of either kind), checked against its recorded
    SHA-256."""
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
    portfolio_report: PortfolioReport | None = None  # or one of its portfolio reports

    @property
    def matched(self) -> bool:
        return self.report is not None or self.portfolio_report is not None


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
    portfolio_report = (
        None
        if report is not None
        else PortfolioReport.objects.filter(
            organization=organization, sha256=sha256, status=ReportStatus.READY
        ).first()
    )
    return ReportVerification(sha256=sha256, report=report, portfolio_report=portfolio_report)
