"""Reads of the outbox; always within one organization."""

from __future__ import annotations

from django.db import models
from django.db.models import QuerySet

from .models import OutboundEmail


def emails_for_organization(*, organization: models.Model) -> QuerySet[OutboundEmail]:
    return OutboundEmail.objects.filter(organization=organization).order_by("-created_at", "-id")
