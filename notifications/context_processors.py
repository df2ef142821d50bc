"""The unread count beside "Notifications" in the member navigation (one query a page)."""

from __future__ import annotations

from django.http import HttpRequest

from accounts.tenancy import org_context_for_request

from .selectors import unread_count


def unread_notifications(request: HttpRequest) -> dict[str, int]:
    context = org_context_for_request(request) if hasattr(request, "user") else None
    if context is None:
        return {}
    return {
        "unread_notifications": unread_count(user=context.user, organization=context.organization)
    }
