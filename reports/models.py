"""PDF reports: one row per generated document.

A report renders one scoring run (not necessarily the latest) in one language; a portfolio
report renders an organization's vendors (or a consultancy's clients) as they stand. Once `ready`,
its file, size and SHA-256 never change: generating again makes a new report with a new
number. The file lives privately under MEDIA_ROOT/reports and is only served through
permission-checked views.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from assessments.models import Assessment, ScoringRun


class ReportStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RENDERING = "rendering", _("Rendering")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")


class ReportLanguage(models.TextChoices):
    EN = "en", "English"
    ZH_HANT = "zh-hant", "繁體中文"


class GeneratedDocument(models.Model):
    """What every generated PDF has, whatever it reports on: a number, a language, a status,
    and once ready its stored file with its size, pages and SHA-256 (`services` renders, stores
    and verifies them all the same way)."""

    language = models.CharField(_("language"), max_length=10, choices=ReportLanguage.choices)
    # Human, and unique within the organization: AVIA-2026-000123, counted per organization
    # and year (see services.report_number_allocate), so a number says nothing of another
    # organization's volume. Reports numbered before that keep their (then global) numbers.
    number = models.CharField(_("report number"), max_length=32)
    status = models.CharField(
        _("status"), max_length=10, choices=ReportStatus.choices, default=ReportStatus.QUEUED
    )
    error = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    storage_name = models.CharField(max_length=255, blank=True)
    size = models.PositiveIntegerField(null=True, blank=True)
    pages = models.PositiveSmallIntegerField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    rendered_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When the report was last handed on: queued, taken by a worker, or queued again by the
    # sweeper, which measures how long a report has been stuck from here.
    dispatched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.number

    @property
    def is_ready(self) -> bool:
        return self.status == ReportStatus.READY

    @property
    def is_pending(self) -> bool:
        return self.status in (ReportStatus.QUEUED, ReportStatus.RENDERING)

    @property
    def filename(self) -> str:
        return f"{self.number}-{self.language}.pdf"


def _document_constraints(prefix: str) -> list[models.BaseConstraint]:
    return [
        models.CheckConstraint(
            condition=models.Q(status__in=ReportStatus.values), name=f"{prefix}_status_valid"
        ),
        models.CheckConstraint(
            condition=models.Q(language__in=ReportLanguage.values),
            name=f"{prefix}_language_valid",
        ),
        # A ready report always has its file and checksum; nothing else claims one.
        models.CheckConstraint(
            condition=(
                models.Q(status=ReportStatus.READY)
                & models.Q(sha256__regex=r"^[0-9a-f]{64}$")
                & ~models.Q(storage_name="")
                & models.Q(size__isnull=False)
                & models.Q(pages__isnull=False)
                & models.Q(rendered_at__isnull=False)
            )
            | (~models.Q(status=ReportStatus.READY) & models.Q(sha256="")),
            name=f"{prefix}_ready_has_file",
        ),
    ]


class Report(GeneratedDocument):
    """The report of one assessment's scoring run."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="reports")
    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="reports")
    # PROTECT: a run that a report reproduces must stay (runs are never deleted anyway).
    run = models.ForeignKey(ScoringRun, on_delete=models.PROTECT, related_name="reports")
    # Whether the appendix prints the clarification threads with the vendor (asked for).
    include_threads = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["organization", "sha256"], name="reports_org_sha256")]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "number"], name="reports_number_unique_per_org"
            ),
            *_document_constraints("reports"),
        ]


class PortfolioKind(models.TextChoices):
    ORGANIZATION = "organization", _("Portfolio report")
    CONSULTANCY = "consultancy", _("Overview across clients")


class PortfolioReport(GeneratedDocument):
    """A report across an organization's vendors (or, for a consultancy, across its clients),
    as they stand when it is rendered.

    `figures` keeps what it counted (tiers, open findings), so that the next one of the same
    organization and kind can say what changed since (`previous`).
    """

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="portfolio_reports"
    )
    kind = models.CharField(
        _("kind"), max_length=20, choices=PortfolioKind.choices, default=PortfolioKind.ORGANIZATION
    )
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    figures = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "sha256"], name="portfolio_reports_org_sha256")
        ]
        constraints = [
            # The number comes from the same sequence as the organization's other reports.
            models.UniqueConstraint(
                fields=["organization", "number"], name="portfolio_reports_number_unique_per_org"
            ),
            *_document_constraints("portfolio_reports"),
            models.CheckConstraint(
                condition=models.Q(kind__in=PortfolioKind.values),
                name="portfolio_reports_kind_valid",
            ),
        ]


class ReportNumberSequence(models.Model):
    """The last report number an organization gave out in a year (AVIA-<year>-<last>).

    Incremented with a single UPDATE ... SET last = last + 1 inside the requesting
    transaction, which takes the row lock: two concurrent requests can never get the same
    number, on SQLite or PostgreSQL. (organization, number) is unique on `Report` as the last
    line of defence.
    """

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="report_number_sequences"
    )
    year = models.PositiveIntegerField()
    last = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "year"], name="reports_sequence_one_per_org_and_year"
            )
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.year}: {self.last}"
