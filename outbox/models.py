"""Every email AVIA sends, as a row first: the outbox.

A row is written in the same transaction as the change that calls for the email, under a key
naming the event (`vendor-link:41`, `reassessment-overdue:17:2026-09-30`), unique in the
database: an event asks for its email once, however often a reminder sweep runs. Sending is
tried once the change commits and again, with a growing delay, when the mail server fails;
the owner sees each row's fate (sent, waiting for a retry, given up, and why) on the outbox page.

This app sits at the bottom of the layers (every app may send mail), so it names the
organization by string and imports nothing of the project.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class EmailStatus(models.TextChoices):
    PENDING = "pending", _("Waiting to be sent")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")


class EmailKind(models.TextChoices):
    VENDOR_INVITATION = "vendor_invitation", _("Vendor invitation")
    CHANGES_REQUESTED = "changes_requested", _("Changes requested")
    RENEWAL = "renewal", _("Reassessment started")
    DUE_SOON = "due_soon", _("Reassessment due soon")
    OVERDUE = "overdue", _("Reassessment overdue")
    DIGEST = "digest", _("Weekly digest")
    RISK_ACCEPTANCE_EXPIRING = "risk_acceptance_expiring", _("Risk acceptance expiring")
    RISK_ACCEPTANCE_EXPIRED = "risk_acceptance_expired", _("Risk acceptance expired")
    MEMBER_INVITATION = "member_invitation", _("Member invitation")
    PASSWORD_RESET = "password_reset", _("Password reset")
    NOTIFICATION = "notification", _("Notification to a member")
    THREAD_QUESTION = "thread_question", _("Question about an answer")
    THREAD_REMINDER = "thread_reminder", _("Question about an answer unanswered")


class OutboundEmail(models.Model):
    # Null for mail that belongs to no organization (a password reset).
    organization = models.ForeignKey(
        "accounts.Organization",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="outbound_emails",
    )
    event_key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=40, choices=EmailKind.choices)
    to_address = models.EmailField()
    language = models.CharField(max_length=10, default="en")
    subject = models.CharField(max_length=300)
    body = models.TextField()
    # The organization's sender name and reply-to address when the email was written (the
    # envelope and From address stay the operator's DEFAULT_FROM_EMAIL).
    from_name = models.CharField(max_length=200, blank=True)
    reply_to = models.EmailField(blank=True)
    # The body holds a secret (a private link's token, a password-reset link): it is emptied
    # once sent (or given up), so the database keeps only the token's hash, as everywhere else.
    body_is_secret = models.BooleanField(default=False)
    status = models.CharField(
        max_length=10, choices=EmailStatus.choices, default=EmailStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Set by the process that is sending the row, so two senders never send it twice.
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-created_at"]),
            models.Index(fields=["status", "next_attempt_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to_address} ({self.status})"
