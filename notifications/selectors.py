"""Reads of a member's notifications: always the member's own, in one organization."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization, User

from .models import Notification


def notifications_for(*, user: User, organization: Organization) -> QuerySet[Notification]:
    return Notification.objects.filter(recipient=user, organization=organization)


def unread_count(*, user: User, organization: Organization) -> int:
    return (
        notifications_for(user=user, organization=organization).filter(read_at__isnull=True).count()
    )


def notification_get(
    *, user: User, organization: Organization, notification_id: int
) -> Notification:
    """The member's own notification (anyone else's is a 404)."""
    return get_object_or_404(
        notifications_for(user=user, organization=organization), pk=notification_id
    )
