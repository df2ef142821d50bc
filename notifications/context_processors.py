"""The unread count beside "Notifications" in the site header: counted when a page shows it
(templates call it), once per request; nothing for anonymous visitors or requests refused
before the session and user were attached."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from django.http import HttpRequest

from accounts.tenancy import org_context_for_request

from .selectors import unread_count


def unread_notifications(request: HttpRequest) -> dict[str, Callable[[], int]]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not hasattr(request, "session"):
        return {}

    @cache
    def count() -> int:
        context = org_context_for_request(request)
        if context is None:
            return 0
        return unread_count(user=context.user, organization=context.organization)

    return {"unread_notifications": count}
