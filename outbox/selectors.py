"""Reads of the outbox; within one organization, except the rate limits' counts."""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import QuerySet

from .models import OutboundEmail


def emails_for_organization(*, organization: models.Model) -> QuerySet[OutboundEmail]:
    return OutboundEmail.objects.filter(organization=organization).order_by("-created_at", "-id")


def emails_written_since(*, kind: str, since: dt.datetime) -> QuerySet[OutboundEmail]:
    """Emails of a kind written since a moment, across organizations: what the rate limits on
    emails anyone can trigger count (password resets, invitations), in the database so that
    they hold with the cache down."""
    return OutboundEmail.objects.filter(kind=kind, created_at__gte=since)
