"""The audit trail: append-only, hash-chained events of who did what, and the head of each
organization's chain. Kept apart because these rows refuse every change (here, and in the
database's triggers), and only `assessments.audit` writes them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Organization
from assessments.models.assessment import Assessment, Channel


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
