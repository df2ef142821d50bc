"""What a vendor gives for an assessment and how it arrives: the answers, the drafts typed but not
saved, every answer's history, the evidence files, and the private links a vendor answers through
(with the failed-lookup counts that rate-limit them when the cache is down)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessments.models.assessment import Assessment, Channel


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


class TokenFailureCount(models.Model):
    """Failed vendor-link lookups per client address, where the cache (Redis) is down: the
    vendor portal's rate limit falls back to these rows (see portal.token_failure_record)."""

    address = models.CharField(max_length=64, unique=True)
    count = models.PositiveIntegerField(default=0)
    window_started_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.count} failures from {self.address}"
