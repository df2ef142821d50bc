"""The audit trail: who did what, appended by the services that do it, chained by SHA-256.

Each event's `hash` covers its content (canonical JSON) and the previous event's hash of the
same organization, so editing or deleting any row breaks the chain from there on. Appends of one
organization are serialised on its chain head row (and the database refuses a second successor
of an event), so concurrent writers cannot fork the chain. `audit_chain_verify` walks it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Organization, User
from core.db import lock_row

from .models import Assessment, AuditChainHead, AuditEvent, Channel, VendorLink


def audit_event_content(event: Any) -> dict[str, Any]:
    """What the hash covers: every column but the id and the hashes themselves. Works on model
    instances of any migration state (the chaining migration uses it too)."""
    return {
        "organization": event.organization_id,
        "assessment": event.assessment_id,
        "actor": event.actor_id,
        "actor_label": event.actor_label,
        "channel": event.channel,
        "action": event.action,
        # As the database gives it back (tuples become lists, and so on).
        "detail": json.loads(json.dumps(event.detail)),
        "created_at": event.created_at.astimezone(dt.UTC).isoformat(timespec="microseconds"),
    }


def audit_event_hash(content: dict[str, Any], previous_hash: str) -> str:
    canonical = json.dumps(
        {"event": content, "previous": previous_hash},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


@transaction.atomic
def audit_record(**event: Any) -> AuditEvent:
    """Record one event (`audit_event`'s arguments), chained to the one before."""
    (recorded,) = audit_record_many([audit_event(**event)])
    return recorded


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


@transaction.atomic
def audit_record_many(events: list[AuditEvent]) -> list[AuditEvent]:
    """Record events built by `audit_event`, in their order, chained, with one INSERT (a batch
    of scoring runs writes one event per run, and holds each chain's head only for this)."""
    by_organization: dict[int, list[AuditEvent]] = {}
    for event in events:
        by_organization.setdefault(event.organization_id, []).append(event)
    heads = {}
    for organization_id in sorted(by_organization):  # locked in one order: no deadlock
        head = heads[organization_id] = _locked_head(organization_id)
        previous = head.hash
        for event in by_organization[organization_id]:
            event.created_at = timezone.now()
            event.previous_hash = previous
            event.hash = previous = audit_event_hash(audit_event_content(event), previous)
    # Ids follow the list's order, and the chain is read in id order (`audit_chain_verify`).
    recorded = AuditEvent.objects.append_chained(events)
    for organization_id, head in heads.items():
        last = by_organization[organization_id][-1]
        head.last_event_id, head.hash = last.pk, last.hash
        head.save(update_fields=["last_event_id", "hash"])
    return recorded


def _locked_head(organization_id: int) -> AuditChainHead:
    # The organization row is locked first, so that two first events cannot both create the
    # head (on SQLite the IMMEDIATE transaction already serialises writers).
    lock_row(Organization, organization_id)
    head, _created = AuditChainHead.objects.select_for_update().get_or_create(
        organization_id=organization_id
    )
    return head


# -- verification --------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditChainReport:
    organization: Organization
    events: int
    broken_event_id: int | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def audit_chain_verify(*, organization: Organization) -> AuditChainReport:
    """Walk the organization's events in order; report the first broken link."""
    expected_previous = ""
    count = 0
    last_id = None
    events = AuditEvent.objects.filter(organization=organization).order_by("id")
    for event in events.iterator(chunk_size=2000):
        if event.previous_hash != expected_previous:
            return AuditChainReport(
                organization,
                count,
                event.pk,
                "it does not follow the event before it: an event was deleted or edited",
            )
        if audit_event_hash(audit_event_content(event), event.previous_hash) != event.hash:
            return AuditChainReport(
                organization, count, event.pk, "its content does not match its hash: edited"
            )
        expected_previous, last_id = event.hash, event.pk
        count += 1
    head = AuditChainHead.objects.filter(organization=organization).first()
    head_hash = head.hash if head is not None else ""
    if head_hash != expected_previous:
        return AuditChainReport(
            organization,
            count,
            head.last_event_id if head is not None else last_id,
            "the newest events are missing: the chain ends before the recorded head",
        )
    return AuditChainReport(organization, count)
