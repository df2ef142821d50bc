"""What members are told, in the app and by email: one row per event and recipient, and each
member's choice, per event, of what to receive.

A notification is written in the recipient's language when its event happens (the title is
kept as written, like an email), under a key unique per recipient, so an event tells each
member once however often its cause is retried. This app sits beside the webhooks, below the
assessments: the apps that cause events pass the recipients, the words' context and the page.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class NotificationEvent(models.TextChoices):
    SUBMITTED = "submitted", _("A vendor submitted an assessment to review")
    TIER_CHANGED = "tier_changed", _("An assessment was scored with a changed risk tier")
    CHANGES_ANSWERED = "changes_answered", _("A vendor answered the changes you requested")
    SIGNED_OFF = "signed_off", _("An assessment you created was signed off")
    CONFIGURATION_CHANGE = "configuration_change", _("A vendor declared a configuration change")
    RISK_ACCEPTANCE_EXPIRING = "risk_acceptance_expiring", _("A risk acceptance expires soon")
    THREAD_ANSWERED = "thread_answered", _("A vendor answered a question about an answer")


class Notification(models.Model):
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="notifications"
    )
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    event = models.CharField(max_length=40, choices=NotificationEvent.choices)
    event_key = models.CharField(max_length=200)
    title = models.CharField(max_length=300)  # in the recipient's language, as written
    path = models.CharField(max_length=500)  # the page it opens, within the site
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["recipient", "event_key"], name="one_notification_per_event_and_member"
            )
        ]
        indexes = [models.Index(fields=["recipient", "organization", "read_at"])]

    def __str__(self) -> str:
        return self.title


class NotificationPreference(models.Model):
    """A member's choice for one event; without a row, both in the app and by email."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preferences"
    )
    event = models.CharField(max_length=40, choices=NotificationEvent.choices)
    in_app = models.BooleanField(default=True)
    email = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "event"], name="one_preference_per_event")
        ]

    def __str__(self) -> str:
        return f"{self.event}: in app {self.in_app}, email {self.email}"
