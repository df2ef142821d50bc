"""The audit trail: who did what, appended by the services that do it."""

from __future__ import annotations

from typing import Any

from accounts.models import Organization, User

from .models import Assessment, AuditEvent, Channel, VendorLink


def audit_record(
    *,
    organization: Organization,
    action: str,
    channel: str,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
    assessment: Assessment | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    (event,) = audit_record_many(
        [
            audit_event(
                organization=organization, action=action, channel=channel, actor=actor,
                vendor_link=vendor_link, assessment=assessment, detail=detail,
            )
        ]
    )  # fmt: skip
    return event


def audit_event(
    *,
    organization: Organization,
    action: str,
    channel: str,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
    assessment: Assessment | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    """An event, not yet recorded: for `audit_record_many`."""
    if actor is not None:
        label = actor.email
    elif vendor_link is not None:
        label = f"vendor link: {vendor_link.contact_email}"
    else:
        label = "AVIA"
        channel = Channel.SYSTEM
    return AuditEvent(
        organization=organization,
        assessment=assessment,
        actor=actor,
        actor_label=label,
        channel=channel,
        action=action,
        detail=detail or {},
    )


def audit_record_many(events: list[AuditEvent]) -> list[AuditEvent]:
    """Record events built by `audit_event`, in their order, with one INSERT (a batch of
    scoring runs writes one event per run)."""
    return AuditEvent.objects.bulk_create(events)
