"""The assessment and its vendor, and the vocabulary every other model of the app shares.

An assessment's statuses, risk tiers, review decisions and channels are here because the
assessment reads them itself (its status label, when it is late or due again) and the other
modules of `assessments.models` import them from here; nothing here imports those modules.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from questionnaires.models import QuestionnaireVersion


class Vendor(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="vendors")
    name = models.CharField(_("name"), max_length=200)
    website = models.URLField(_("website"), blank=True)
    contact_name = models.CharField(_("contact name"), max_length=200, blank=True)
    contact_email = models.EmailField(_("contact email"), blank=True)
    notes = models.TextField(_("notes"), blank=True, max_length=4000)
    created_at = models.DateTimeField(auto_now_add=True)
    # Moves with every save: a cached count of a search by name must follow a rename.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"], name="unique_vendor_name_per_org"
            )
        ]
        ordering = ["name"]
        # (organization, name) is the unique constraint's index: the list and its cursor.
        # (organization, updated_at): the vendors' data version, one index lookup.
        indexes = [models.Index(fields=["organization", "updated_at"], name="vendor_org_changed")]

    def __str__(self) -> str:
        return self.name


class AssessmentStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    SENT = "sent", _("Sent to vendor")
    SUBMITTED = "submitted", _("Submitted")
    SCORED = "scored", _("Scored")
    SCORING_FAILED = "scoring_failed", _("Scoring failed")
    CHANGES_REQUESTED = "changes_requested", _("Changes requested")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


# Waiting for answers (an overdue one is late); signed off (nothing more to do).
OPEN_STATUSES = (AssessmentStatus.DRAFT, AssessmentStatus.SENT, AssessmentStatus.CHANGES_REQUESTED)
CLOSED_STATUSES = (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED)
# Scored or approved: the vendor is due again on `reassess_by` (assessments.services.reassessment).
RENEWABLE_STATUSES = (AssessmentStatus.SCORED, AssessmentStatus.APPROVED)


class RiskTier(models.TextChoices):
    CRITICAL = "critical", _("Critical")
    HIGH = "high", _("High")
    MEDIUM = "medium", _("Medium")
    LOW = "low", _("Low")


class RenewalReason(models.TextChoices):
    DUE = "due", _("Reassessment due")
    CONFIGURATION_CHANGE = "configuration_change", _("Configuration change")


class ConfigurationChange(models.TextChoices):
    """What a vendor may declare changed in a deployment: the incident's lesson is that any of
    these can shrink the KV-cache pool below the advertised context."""

    WEIGHTS = "weights", _("Model weights")
    QUANTIZATION = "quantization", _("Quantization")
    PARALLELISM = "parallelism", _("Parallelism (tensor, pipeline, expert or data)")
    MEMORY = "memory", _("GPU memory or KV-cache settings")


class ReviewDecision(models.TextChoices):
    APPROVED = "approved", _("Approved")
    APPROVED_WITH_CONDITIONS = "approved_with_conditions", _("Approved with conditions")
    REJECTED = "rejected", _("Rejected")
    CHANGES_REQUESTED = "changes_requested", _("Changes requested")


class Channel(models.TextChoices):
    """How a change reached AVIA (for the history and the audit trail)."""

    WEB = "web", _("Web")
    API = "api", _("API")
    VENDOR_LINK = "vendor_link", _("Vendor link")
    SYSTEM = "system", _("System")


class Assessment(models.Model):
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="assessments"
    )
    vendor = models.ForeignKey(Vendor, on_delete=models.PROTECT, related_name="assessments")
    # Tells one vendor's assessments apart: "#12" (per organization, in creation order, never
    # reused) and an optional label the assessors choose ("GLM-5.3 launch").
    number = models.PositiveIntegerField(_("number"))
    label = models.CharField(_("label"), max_length=80, blank=True)
    questionnaire = models.ForeignKey(
        QuestionnaireVersion, on_delete=models.PROTECT, related_name="assessments"
    )
    status = models.CharField(
        _("status"), max_length=20, choices=AssessmentStatus.choices, default=AssessmentStatus.DRAFT
    )
    due_date = models.DateField(_("due date"), null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", null=True
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The newest finished run, kept on the row so lists need no extra query per assessment.
    latest_run = models.ForeignKey(
        "ScoringRun", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    risk_score = models.PositiveSmallIntegerField(null=True, blank=True)
    risk_tier = models.CharField(max_length=10, choices=RiskTier.choices, blank=True)
    # When the vendor must be assessed again: set from the organization's reassessment policy
    # when the assessment is scored or approved (`assessments.services.reassessment`).
    reassess_by = models.DateField(_("reassessment due"), null=True, blank=True)
    # A renewal is a new assessment that starts from the answers of the one it renews.
    renewal_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="renewals"
    )
    renewal_reason = models.CharField(max_length=30, choices=RenewalReason.choices, blank=True)
    # A renewal of this one was opened (`renewal_start`): its vendor's lateness, if any, is the
    # renewal's from then on. Kept on the row so "overdue" is a test of columns the dashboard's
    # index scan reads, not a subquery per row.
    renewed = models.BooleanField(default=False)
    # What the vendor declared changed: {"changes": [ConfigurationChange...], "note": "..."}.
    configuration_change = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "number"], name="unique_assessment_number_per_org"
            )
        ]
        indexes = [
            models.Index(fields=["organization", "status"]),
            # The API's list and its cursor (newest first), the count's version.
            models.Index(
                fields=["organization", "-created_at", "-id"], name="assessment_org_newest"
            ),
            models.Index(fields=["organization", "updated_at"], name="assessment_org_changed"),
            # The dashboard's order within each stage of urgency (selectors.UrgencyOrdered).
            models.Index(
                fields=["organization", "due_date", "-created_at", "-id"],
                include=["status"],  # PostgreSQL: the stages' filter read from the index alone
                name="assessment_org_due",
            ),
            models.Index(fields=["organization", "reassess_by"]),
        ]

    def __str__(self) -> str:
        return f"{self.vendor} — {self.questionnaire.key}"

    @property
    def reference(self) -> str:
        """ "#12 · GLM-5.3 launch", or "#12" without a label: beside the vendor's name wherever
        it names this assessment."""
        return f"#{self.number} · {self.label}" if self.label else f"#{self.number}"

    @property
    def status_label(self) -> str:
        """The status as the decision was made: "Approved with conditions", not "Approved".

        Lists annotate `latest_decision` (`selectors.assessments_for`); elsewhere it is read."""
        if self.status != AssessmentStatus.APPROVED:
            return str(self.get_status_display())
        if "latest_decision" in self.__dict__:
            decision = self.__dict__["latest_decision"]
        else:
            decision = (
                self.reviews.order_by("-created_at", "-pk")
                .values_list("decision", flat=True)
                .first()
            )
        if decision == ReviewDecision.APPROVED_WITH_CONDITIONS:
            return str(ReviewDecision(decision).label)
        return str(self.get_status_display())

    @property
    def is_overdue(self) -> bool:
        """Late today (the active time zone's date); the same rule as `overdue()`."""
        return self.overdue_since is not None

    @property
    def overdue_since(self) -> dt.date | None:
        """The date this assessment has been late since, or None: its answers were due (and
        not given), or its vendor was due for the next assessment and none was opened yet."""
        today = timezone.localdate()
        if self.due_date and self.status in OPEN_STATUSES and self.due_date < today:
            return self.due_date
        if (
            self.reassess_by
            and self.status in RENEWABLE_STATUSES
            and self.reassess_by < today
            and not self.renewed
        ):
            return self.reassess_by
        return None


def overdue(today: dt.date) -> Q:
    """Which assessments are late on `today` (the organization's date), for every list, count,
    filter, digest and export: answers due before today and not given, or a vendor due for its
    next assessment before today with no renewal opened (a renewal carries that date as its
    own due date, and is late until the vendor submits)."""
    return Q(status__in=OPEN_STATUSES, due_date__lt=today) | Q(
        status__in=RENEWABLE_STATUSES, reassess_by__lt=today, renewed=False
    )


# Days from scoring (or approval) to the next assessment, by risk tier, unless the organization's
# owner sets other figures.
DEFAULT_REASSESSMENT_DAYS = {
    RiskTier.CRITICAL: 90,
    RiskTier.HIGH: 180,
    RiskTier.MEDIUM: 365,
    RiskTier.LOW: 730,
}


class ReassessmentPolicy(models.Model):
    """How often an organization reassesses a vendor, by the tier of its latest result."""

    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, related_name="reassessment_policy"
    )
    critical_days = models.PositiveSmallIntegerField(
        _("critical"), default=DEFAULT_REASSESSMENT_DAYS[RiskTier.CRITICAL]
    )
    high_days = models.PositiveSmallIntegerField(
        _("high"), default=DEFAULT_REASSESSMENT_DAYS[RiskTier.HIGH]
    )
    medium_days = models.PositiveSmallIntegerField(
        _("medium"), default=DEFAULT_REASSESSMENT_DAYS[RiskTier.MEDIUM]
    )
    low_days = models.PositiveSmallIntegerField(
        _("low"), default=DEFAULT_REASSESSMENT_DAYS[RiskTier.LOW]
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(critical_days__gte=1)
                & models.Q(high_days__gte=1)
                & models.Q(medium_days__gte=1)
                & models.Q(low_days__gte=1),
                name="reassessment_days_positive",
            )
        ]

    def __str__(self) -> str:
        return f"reassessment policy of {self.organization_id}"

    def days_for(self, tier: str) -> int | None:
        return getattr(self, f"{tier}_days", None) if tier in RiskTier.values else None
