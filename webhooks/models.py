"""Webhook endpoints an owner registers, and every delivery to them, as a row first.

A delivery is written in the transaction of the change that caused its event, under a key
unique per endpoint (`assessment.scored:run:812`), so an event is delivered once however often
its cause is retried. It is sent once that transaction commits, then again with a growing
delay while the receiver fails (the outbox's pattern, `outbox.models`); the owner sees each
delivery's fate, the receiver's status and the start of its answer.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from .events import WebhookEvent


class WebhookEndpoint(models.Model):
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(max_length=500)
    description = models.CharField(max_length=200, blank=True)
    # The event names it receives (`WebhookEvent` values).
    events = models.JSONField(default=list)
    # The signing secret, encrypted at rest (core.encryption); shown to the owner once.
    secret_encrypted = models.TextField()
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.url


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("Waiting to be delivered")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Failed")


class WebhookDelivery(models.Model):
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    # The endpoint's organization, kept on the row so that every read is scoped by it.
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="webhook_deliveries"
    )
    event = models.CharField(max_length=40, choices=WebhookEvent.choices)
    event_key = models.CharField(max_length=200)
    payload = models.JSONField()
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_excerpt = models.TextField(blank=True)  # the start of the receiver's answer
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Set by the process that is sending the row, so two senders never send it at once.
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event_key"], name="one_delivery_per_endpoint_and_event"
            )
        ]
        indexes = [
            models.Index(fields=["organization", "-created_at"]),
            models.Index(fields=["status", "next_attempt_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.endpoint_id} ({self.status})"
