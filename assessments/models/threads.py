"""Clarification threads: the questions a member and the vendor ask each other about one
question of an assessment, whose turn it is to answer, and the messages."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from assessments.models.assessment import Assessment


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
