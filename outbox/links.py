"""Addresses of the site's pages, for emails: SITE_URL (as the outside world reaches the site)
and the project's own URLconf, whatever the current request or a test mounts."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

SITE_URLCONF = "config.urls"


def site_url(
    view_name: str, *args: object, fragment: str = "", query: str = "", **kwargs: object
) -> str:
    """`query` (without "?"): for a member page, `accounts.tenancy.organization_query`, so the
    link opens in its own organization whatever the reader is working in."""
    path = reverse(view_name, args=args or None, kwargs=kwargs or None, urlconf=SITE_URLCONF)
    return site_address(f"{path}{f'?{query}' if query else ''}{f'#{fragment}' if fragment else ''}")


def site_path(view_name: str, *args: object) -> str:
    """The page's path within the site (what a notification keeps: the site may move)."""
    return reverse(view_name, args=args or None, urlconf=SITE_URLCONF)


def site_address(path: str) -> str:
    """The address of `path` (a path within the site) as the outside world reaches it."""
    return f"{settings.SITE_URL.rstrip('/')}{path}"
