"""Rows that stand for work done outside the database (an email to send, a webhook to
deliver): claimed by one process at a time, tried again with a growing delay while the other
side fails. The outbox and the webhook deliveries share this; each keeps its own row model."""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import Q

# A sender that claimed a row and then vanished (killed mid-send) releases it after this long.
CLAIM_TIMEOUT = dt.timedelta(minutes=5)
# A row never tried this long after it was written lost its first attempt (the process died
# between commit and send): the retry sweep takes it over.
FIRST_ATTEMPT_GRACE = dt.timedelta(minutes=1)


def attempt_claim(queryset: models.QuerySet, *, pk: int, pending: str, now: dt.datetime) -> bool:
    """Claim row `pk` for one attempt at `now`: True when it is waiting (`status=pending`), due,
    and not held by a live claim. The claim is `claimed_at=now`; an update that filters on it
    acts only while the claim holds."""
    return bool(
        queryset.filter(pk=pk, status=pending)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_TIMEOUT))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .update(claimed_at=now)
    )


def retry_delay(*, attempts: int, base_seconds: int) -> dt.timedelta:
    """The wait after the `attempts`-th failure: base, 2 × base, 4 × base, …"""
    return dt.timedelta(seconds=base_seconds * 2 ** (attempts - 1))


def due_for_retry(queryset: models.QuerySet, *, pending: str, now: dt.datetime) -> models.QuerySet:
    """The waiting rows due again: their delay is over, or their first attempt was lost."""
    return queryset.filter(status=pending).filter(
        Q(next_attempt_at__lte=now)
        | Q(next_attempt_at__isnull=True, created_at__lt=now - FIRST_ATTEMPT_GRACE)
    )
