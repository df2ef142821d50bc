"""The one access helper of every member page, whatever app it belongs to.

`@member_page` (or `@member_page(capability=...)`) signs the visitor in, resolves the
organization the request acts in once — the one named by the URL's `organization_slug`, else
the session's current one — checks the role's capability (403), and calls the view as
`view(request, org, **kwargs)` in the organization's time zone and the member's language.
An organization the user is not a member of is a 404, so slugs cannot be probed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import SimpleTemplateResponse
from django.utils import timezone, translation

from .roles import Capability
from .tenancy import OrgContext, org_context_for, org_context_for_request

View = Callable[..., HttpResponse]


def member_context(request: HttpRequest, organization_slug: str | None = None) -> OrgContext:
    """The organization the request acts in (403 without one; 404 for a foreign slug)."""
    if organization_slug is not None:
        return org_context_for(user=request.user, organization_slug=organization_slug)
    context = org_context_for_request(request)
    if context is None:
        raise PermissionDenied
    return context


@overload
def member_page(view: View) -> View: ...
@overload
def member_page(*, capability: str = ...) -> Callable[[View], View]: ...


def member_page(
    view: View | None = None, *, capability: str = Capability.VIEW
) -> View | Callable[[View], View]:
    """Decorate a member page; see the module's description."""

    def decorate(view: View) -> View:
        @login_required
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            org = member_context(request, kwargs.pop("organization_slug", None))
            org.require(capability)
            with timezone.override(org.organization.time_zone):
                return _in_preferred_language(request, lambda: view(request, org, *args, **kwargs))

        return wrapper

    return decorate(view) if view is not None else decorate


def _in_preferred_language(
    request: HttpRequest, respond: Callable[[], HttpResponse]
) -> HttpResponse:
    """The member's saved language on a browser that has not chosen one yet (the first page
    after signing in on a new device).

    The language is applied for this response only (`translation.override`) and remembered in
    the language cookie that Django's LocaleMiddleware reads on every later request; nothing is
    kept between requests in the process.
    """
    return respond_in_language(request, getattr(request.user, "preferred_language", ""), respond)


def respond_in_language(
    request: HttpRequest, preferred: str, respond: Callable[[], HttpResponse]
) -> HttpResponse:
    """`respond()` in `preferred` (and that language remembered in the cookie) unless the
    browser already chose one; a template response is rendered within that language."""
    if (
        settings.LANGUAGE_COOKIE_NAME in request.COOKIES
        or preferred not in dict(settings.LANGUAGES)
        or preferred == translation.get_language()
    ):
        return respond()
    with translation.override(preferred):
        response = respond()
        if isinstance(response, SimpleTemplateResponse):
            response.render()
    response.headers["Content-Language"] = preferred
    set_language_cookie(response, preferred)
    return response


def set_language_cookie(response: HttpResponse, language: str) -> None:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
