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
    if actor is not None:
        label = actor.email
    elif vendor_link is not None:
        label = f"vendor link: {vendor_link.contact_email}"
    else:
        label = "AVIA"
        channel = Channel.SYSTEM
    return AuditEvent.objects.create(
        organization=organization,
        assessment=assessment,
        actor=actor,
        actor_label=label,
        channel=channel,
        action=action,
        detail=detail or {},
    )
