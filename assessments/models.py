"""Vendors, assessments and everything attached to one: answers and their history, evidence
files, vendor links, scoring runs with their findings, reviews and the audit trail.

Every row of tenant data carries its organization (directly or through its assessment); reads
go through `assessments.selectors`, which always take the organization.
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
from scoring.models import Ruleset


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


class Channel(models.TextChoices):
    """How a change reached AVIA (for the history and the audit trail)."""

    WEB = "web", _("Web")
    API = "api", _("API")
    VENDOR_LINK = "vendor_link", _("Vendor link")
    SYSTEM = "system", _("System")


class Answer(models.Model):
    """The current answer to one question; its history is in `AnswerRevision`."""

    # No index of its own: the unique (assessment, question_code) index serves every lookup by
    # assessment, and one index fewer is less to write per answer.
    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="answers", db_index=False
    )
    question_code = models.CharField(max_length=20)
    value = models.JSONField(null=True)
    comment = models.TextField(blank=True, max_length=4000)
    # Re-opened by a reviewer's "request changes": the vendor may edit these again.
    reopened = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assessment", "question_code"], name="unique_answer")
        ]

    def __str__(self) -> str:
        return f"{self.question_code} = {self.value!r}"


class AnswerDraft(models.Model):
    """What someone typed for a question but has not saved yet: kept as typed (it may not be a
    valid answer), so that nothing typed is lost to a link, an upload, a reload or a closed tab.
    Saving the answer (validated, all or nothing) removes the draft; scoring never reads one."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="drafts")
    question_code = models.CharField(max_length=20)
    value = models.JSONField(null=True)  # as typed: a string, or a list of option codes
    comment = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    vendor_link = models.ForeignKey(
        "VendorLink", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assessment", "question_code"], name="unique_draft")
        ]

    def __str__(self) -> str:
        return f"draft {self.question_code} = {self.value!r}"


class AnswerRevision(models.Model):
    """Who changed which answer when — append-only."""

    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="answer_revisions"
    )
    question_code = models.CharField(max_length=20)
    value = models.JSONField(null=True)
    comment = models.TextField(blank=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    vendor_link = models.ForeignKey(
        "VendorLink", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    channel = models.CharField(max_length=20, choices=Channel.choices)
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-changed_at", "-id"]

    def __str__(self) -> str:
        return f"{self.question_code} @ {self.changed_at:%Y-%m-%d %H:%M}"


class EvidenceFile(models.Model):
    """A file a vendor or assessor attached to a file question. Stored privately (outside any
    public media URL) and served only through permission-checked views."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="evidence")
    question_code = models.CharField(max_length=20)
    original_name = models.CharField(max_length=255)
    storage_name = models.CharField(max_length=255, unique=True)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    content_type = models.CharField(max_length=100)
    parsed = models.BooleanField(default=False)
    parse_result = models.JSONField(default=dict)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    channel = models.CharField(max_length=20, choices=Channel.choices)
    uploaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["uploaded_at", "id"]

    def __str__(self) -> str:
        return self.original_name


class VendorLink(models.Model):
    """A private link that lets a vendor contact answer one assessment without an account.

    Only the SHA-256 of the token is stored; the token itself is shown once, in the email.
    """

    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="vendor_links"
    )
    contact_email = models.EmailField()
    contact_name = models.CharField(max_length=200, blank=True)
    language = models.CharField(max_length=10, default="en")
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Set with revoked_at when a new link to the same contact took this one's place: the page
    # then reads "Replaced", not "Revoked".
    replaced_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"link for {self.contact_email}"

    @property
    def state(self) -> str:
        """active, replaced, revoked or expired: what the assessment page says of the link."""
        if self.replaced_by_id is not None:
            return "replaced"
        if self.revoked_at is not None:
            return "revoked"
        return "active" if self.expires_at > timezone.now() else "expired"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class ScoringRun(models.Model):
    """One scoring of an assessment's answers by one ruleset version. Runs are never deleted or
    rewritten once succeeded: a rescore is a new run, and every past run stays viewable."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="runs")
    ruleset = models.ForeignKey(Ruleset, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    as_of = models.DateField()
    answers_snapshot = models.JSONField(default=dict)
    evidence_snapshot = models.JSONField(default=dict)
    risk_score = models.PositiveSmallIntegerField(null=True)
    risk_tier = models.CharField(max_length=10, choices=RiskTier.choices, blank=True)
    sections = models.JSONField(default=dict)
    duration_ms = models.PositiveIntegerField(null=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True)
    # When the run was last handed on: queued, taken by a worker, or queued again by the
    # sweeper, which measures how long a run has been stuck from here.
    dispatched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} of assessment {self.assessment_id} ({self.status})"


class Finding(models.Model):
    # No index of its own: the unique (run, rule_id) index serves every lookup by run, and a
    # rescore writes about twenty findings per assessment (one index fewer to keep up).
    run = models.ForeignKey(
        ScoringRun, on_delete=models.CASCADE, related_name="findings", db_index=False
    )
    rule_id = models.CharField(max_length=60)
    severity = models.CharField(max_length=10, choices=RiskTier.choices)
    points = models.PositiveSmallIntegerField()
    section = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    evidence = models.JSONField(default=list)
    references = models.JSONField(default=list)

    class Meta:
        # A redelivered task cannot duplicate findings: the database refuses a second row.
        constraints = [
            models.UniqueConstraint(fields=["run", "rule_id"], name="unique_finding_per_run")
        ]
        ordering = ["run", "position"]

    def __str__(self) -> str:
        return self.rule_id


class ReviewDecision(models.TextChoices):
    APPROVED = "approved", _("Approved")
    APPROVED_WITH_CONDITIONS = "approved_with_conditions", _("Approved with conditions")
    REJECTED = "rejected", _("Rejected")
    CHANGES_REQUESTED = "changes_requested", _("Changes requested")


class Review(models.Model):
    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="reviews")
    run = models.ForeignKey(ScoringRun, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decision = models.CharField(max_length=30, choices=ReviewDecision.choices)
    conditions = models.TextField(blank=True, max_length=4000)
    message = models.TextField(blank=True, max_length=4000)
    reopened_codes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.decision} by {self.reviewer_id}"


class ThreadStatus(models.TextChoices):
    OPEN = "open", _("Open")
    RESOLVED = "resolved", _("Resolved")


class ThreadTurn(models.TextChoices):
    """Who is to write next in an open thread: the vendor after a member asked, the members
    after the vendor answered (the dashboard counts these; the reminder sweep the others)."""

    VENDOR = "vendor", _("Vendor")
    MEMBER = "member", _("Member")


class Thread(models.Model):
    """A clarification about one question of an assessment, between its assessors and the
    vendor: one per question (a later question continues it), open until a member resolves it."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="threads")
    question_code = models.CharField(max_length=20)
    status = models.CharField(max_length=10, choices=ThreadStatus.choices, default="open")
    turn = models.CharField(max_length=10, choices=ThreadTurn.choices, default="vendor")
    # Since when the side whose turn it is has owed an answer (the reminder's key).
    turn_since = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question_code"]
        constraints = [
            models.UniqueConstraint(
                fields=["assessment", "question_code"], name="unique_thread_per_question"
            )
        ]
        indexes = [models.Index(fields=["status", "turn", "turn_since"], name="thread_waiting")]

    def __str__(self) -> str:
        return f"{self.question_code} ({self.status})"


class ThreadMessage(models.Model):
    """One message of a thread: written by a member or by the vendor through a link."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    vendor_link = models.ForeignKey(
        "VendorLink", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    body = models.TextField(max_length=4000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(author__isnull=True) | models.Q(vendor_link__isnull=True),
                name="thread_message_one_author",
            )
        ]

    def __str__(self) -> str:
        return f"message {self.pk} of thread {self.thread_id}"

    @property
    def from_vendor(self) -> bool:
        return self.author_id is None


class RiskDecisionKind(models.TextChoices):
    ACCEPTANCE = "acceptance", _("Risk acceptance")
    MITIGATION = "mitigation", _("Mitigation")


class RiskDecision(models.Model):
    """A risk acceptance or mitigation recorded against a finding's rule. It is shown beside the
    finding and never hides it."""

    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="risk_decisions"
    )
    rule_id = models.CharField(max_length=60)
    kind = models.CharField(max_length=20, choices=RiskDecisionKind.choices)
    justification = models.TextField(max_length=4000)
    owner = models.CharField(max_length=200)
    expires_on = models.DateField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} of {self.rule_id}"


class AppendOnlyError(Exception):
    """Audit events are never changed or deleted."""


class AuditEventQuerySet(models.QuerySet):
    """Every bulk path that could change or remove audit events raises (the database refuses
    too: see the triggers in migration 0004)."""

    def update(self, **kwargs: object) -> int:
        raise AppendOnlyError("audit events are append-only: update() is refused")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("audit events are append-only: delete() is refused")

    def _raw_delete(self, using: str) -> int:  # what cascades use
        raise AppendOnlyError("audit events are append-only: delete() is refused")

    def bulk_update(self, objs: object, fields: object, batch_size: object = None) -> int:
        raise AppendOnlyError("audit events are append-only: bulk_update() is refused")

    def bulk_create(self, objs: object, *args: object, **kwargs: object) -> list:
        # Only audit_record(_many) appends: it chains each event to the one before.
        raise AppendOnlyError("audit events are written by audit_record, chained")

    def append_chained(self, events: list[AuditEvent]) -> list[AuditEvent]:
        """For `assessments.audit.audit_record_many` alone: events it has chained, in order."""
        return super().bulk_create(events)


class AuditEvent(models.Model):
    """Append-only record of who did what. Written only by `assessments.audit.audit_record`.

    Tamper-evident: each event stores the SHA-256 of its content and of the previous event of
    its organization (`previous_hash`), so an edited or deleted row breaks the chain that
    `manage.py verify_audit` walks. Rows outlive nothing they point to: the organization, the
    assessment and the actor are protected from deletion while events name them.
    """

    organization = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="audit_events"
    )
    assessment = models.ForeignKey(
        Assessment, on_delete=models.PROTECT, null=True, blank=True, related_name="audit_events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    actor_label = models.CharField(max_length=255)
    channel = models.CharField(max_length=20, choices=Channel.choices)
    action = models.CharField(max_length=50)
    detail = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    previous_hash = models.CharField(max_length=64, blank=True)
    hash = models.CharField(max_length=64)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One successor per event: two writers cannot fork an organization's chain.
            models.UniqueConstraint(
                fields=["organization", "previous_hash"], name="audit_chain_no_fork"
            )
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_label}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise AppendOnlyError("audit events are append-only")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("audit events are append-only")


class AuditChainHead(models.Model):
    """The newest event of an organization's audit chain. Its row is locked while an event is
    appended (so appends queue up), and it lets verify_audit notice deleted newest events."""

    organization = models.OneToOneField(
        Organization, on_delete=models.PROTECT, primary_key=True, related_name="+"
    )
    last_event_id = models.PositiveBigIntegerField(null=True)
    hash = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"audit chain head of {self.organization_id}"


class TokenFailureCount(models.Model):
    """Failed vendor-link lookups per client address, where the cache (Redis) is down: the
    vendor portal's rate limit falls back to these rows (see portal.token_failure_record)."""

    address = models.CharField(max_length=64, unique=True)
    count = models.PositiveIntegerField(default=0)
    window_started_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.count} failures from {self.address}"
