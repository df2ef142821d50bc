"""The one access helper of every member page, whatever app it belongs to.

`@member_page` (or `@member_page(capability=...)`) signs the visitor in, resolves the
organization the request acts in once (accounts.tenancy: the one named by the URL's
`organization_slug`, else the session's current one; a write from a page drawn for another
organization is answered 409 with a page that offers to switch, and the view never runs),
checks the role's capability (403), and calls the view as `view(request, org, **kwargs)` in the
organization's time zone and the member's language. An organization the user is not a member
of is a 404, so slugs cannot be probed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, overload

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.response import SimpleTemplateResponse
from django.utils import timezone, translation
from django.utils.http import url_has_allowed_host_and_scheme

from .roles import Capability
from .tenancy import DrawnForAnotherOrganization, OrgContext, member_context_for_request

View = Callable[..., HttpResponse]


def member_context(request: HttpRequest, organization_slug: str | None = None) -> OrgContext:
    """The organization the request acts in (403 without one; 404 for a foreign slug)."""
    return member_context_for_request(request, organization_slug)


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
            try:
                org = member_context(request, kwargs.pop("organization_slug", None))
            except DrawnForAnotherOrganization as refused:
                return _drawn_for_another_organization(request, refused)
            org.require(capability)
            with timezone.override(org.organization.time_zone):
                return _in_preferred_language(request, lambda: view(request, org, *args, **kwargs))

        return wrapper

    return decorate(view) if view is not None else decorate


def _drawn_for_another_organization(
    request: HttpRequest, refused: DrawnForAnotherOrganization
) -> HttpResponse:
    """409: the page was drawn for another organization than the one the request acts in now
    (switched in another tab). Says which, offers to switch back to the page it came from; an
    htmx request gets the same words in the page's status line."""
    back = request.headers.get("Referer", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = "/"
    current = refused.current
    with timezone.override(current.organization.time_zone):
        return _in_preferred_language(
            request,
            lambda: render(
                request,
                "accounts/_drawn_for_another_organization.html"
                if request.headers.get("HX-Request")
                else "accounts/drawn_for_another_organization.html",
                {
                    "drawn_for": refused.drawn_for,
                    "current_organization": current.organization,
                    "back": back,
                },
                status=409,
            ),
        )


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
