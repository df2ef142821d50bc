"""Reads of the webhooks; always within one organization (another's endpoint is a 404)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization

from .models import WebhookDelivery, WebhookEndpoint


def endpoints_for(*, organization: Organization) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(organization=organization)


def endpoint_get(*, organization: Organization, endpoint_id: int) -> WebhookEndpoint:
    return get_object_or_404(endpoints_for(organization=organization), pk=endpoint_id)


def deliveries_for(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(
        endpoint=endpoint, organization_id=endpoint.organization_id
    ).order_by("-created_at", "-id")
