"""The end of a probe run for the vendor's test keys: destroyed first (overwritten, then
nulled), then the end audited. One helper for every path that ends a run, finished or failed,
so that none can audit an end and leave the keys behind."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone

from assessments.audit import audit_record
from assessments.models import Channel

from ..models import ProbeRun, ProbeSetup


def probe_run_end(run: ProbeRun, *, finished: bool, detail: dict[str, Any]) -> None:
    """The end of a run, finished or failed, inside the caller's transaction: the test keys are
    destroyed first (another run needs the vendor to enter them again), then the end is
    audited. Every path that ends a run comes here, so none can leave the keys behind."""
    probe_keys_destroy(setup=ProbeSetup.objects.select_for_update().get(pk=run.setup_id))
    event: dict[str, Any] = {
        "organization": run.assessment.organization,
        "assessment": run.assessment,
        "channel": Channel.SYSTEM,
        "detail": detail,
    }
    # (the action written out, for the scan of recorded actions: tests/web/test_audit_labels.py)
    if finished:
        audit_record(action="probe.finished", **event)
    else:
        audit_record(action="probe.failed", **event)


@transaction.atomic
def probe_keys_destroy(*, setup: ProbeSetup) -> None:
    """Overwrite the stored ciphertexts with random text of the same length, then null them,
    so that the row's old bytes are replaced before they are freed."""
    if not setup.keys_present:
        return
    fields = ["key_a_ciphertext", "key_b_ciphertext"]
    for name in fields:
        length = len(getattr(setup, name))
        setattr(setup, name, secrets.token_urlsafe(length)[:length])
    setup.save(update_fields=fields)
    for name in fields:
        setattr(setup, name, None)
    setup.keys_destroyed_at = timezone.now()
    setup.save(update_fields=[*fields, "keys_destroyed_at"])
    audit_record(
        organization=setup.organization,
        assessment=setup.assessment,
        action="probe.keys_destroyed",
        channel=Channel.SYSTEM,
    )
