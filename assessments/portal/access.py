"""The portal's one access helper, `portal_view`: the token resolved (failed attempts counted per
client IP), the page in the contact's language and the organization's time zone, and the
same private 404 page for whatever is not found."""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone, translation
from django.utils.cache import patch_cache_control

from core.cache import CACHE_ERRORS, cache_count
from questionnaires.spec import QuestionnaireSpec, Section

from ..models import (
    Assessment,
    TokenFailureCount,
    VendorLink,
)
from ..services.vendor_links import vendor_link_dead, vendor_link_resolve

# -- token failures, rate-limited per client IP ---------------------------------------------
#
# Tokens carry 256 bits, so guessing is hopeless anyway; the limit keeps scanners from hammering
# the token lookup and makes them visible. Only failures count: a vendor reloading a page is
# never limited. An address over the limit gets 429 for every unknown token, but a valid link
# still opens from it: behind a shared NAT address one scanner must not lock every vendor out,
# and telling a scanner "this one is valid" costs nothing when it cannot find one to try.
# Failures are counted in the cache (Redis in production); when the cache is down they are
# counted in the database instead, so the portal keeps working and the limit keeps holding.


logger = logging.getLogger(__name__)


def _token_failure_limit() -> int:
    return getattr(settings, "PORTAL_TOKEN_FAILURE_LIMIT", 20)


def _token_failure_window() -> int:
    return getattr(settings, "PORTAL_TOKEN_FAILURE_WINDOW", 10 * 60)  # seconds


def _client_address(request: HttpRequest) -> str:
    # REMOTE_ADDR, not X-Forwarded-For: a client can write any forwarded address it likes.
    # Behind trusted reverse proxies config.proxy.TrustedProxyMiddleware has set it already.
    return (request.META.get("REMOTE_ADDR") or "unknown")[:64]


def _token_failure_key(request: HttpRequest) -> str:
    return f"portal:token-failures:{_client_address(request)}"


def _token_failures(request: HttpRequest) -> int:
    try:
        return cache.get(_token_failure_key(request), 0)
    except CACHE_ERRORS as exc:
        logger.warning("cache unavailable, counting vendor-link failures in the database: %s", exc)
    window_start = timezone.now() - dt.timedelta(seconds=_token_failure_window())
    row = TokenFailureCount.objects.filter(
        address=_client_address(request), window_started_at__gt=window_start
    ).first()
    return row.count if row is not None else 0


def token_failures_exceeded(request: HttpRequest) -> bool:
    if _token_failures(request) < _token_failure_limit():
        return False
    token = request.resolver_match.kwargs.get("token", "") if request.resolver_match else ""
    return vendor_link_resolve(token=token) is None


def token_failure_record(request: HttpRequest) -> None:
    if cache_count(_token_failure_key(request), window_seconds=_token_failure_window()) is None:
        # The cache is away: count in the database instead.
        _token_failure_record_in_database(_client_address(request))


@transaction.atomic
def _token_failure_record_in_database(address: str) -> None:
    now = timezone.now()
    row, created = TokenFailureCount.objects.select_for_update().get_or_create(
        address=address, defaults={"count": 1, "window_started_at": now}
    )
    if created:
        return
    if now - row.window_started_at > dt.timedelta(seconds=_token_failure_window()):
        row.count, row.window_started_at = 1, now  # a new window
    else:
        row.count += 1
    row.save(update_fields=["count", "window_started_at"])


# -- the access helper every view goes through ----------------------------------------------


@dataclass(frozen=True)
class Portal:
    """What a portal view works on: the link, its token (for URLs) and the page language."""

    link: VendorLink
    token: str
    language: str

    @property
    def assessment(self) -> Assessment:
        return self.link.assessment

    @property
    def spec(self) -> QuestionnaireSpec:
        return self.link.assessment.questionnaire.spec

    def vendor_section(self, code: str) -> Section:
        """A vendor-facing section, or 404 (the buyer's sections do not exist here)."""
        try:
            section = self.spec.section(code)
        except KeyError:
            raise Http404 from None
        if not section.vendor_facing:
            raise Http404
        return section

    @property
    def vendor_sections(self) -> list[Section]:
        return [s for s in self.spec.sections if s.vendor_facing]


def language_session_key(link: VendorLink) -> str:
    return f"portal:language:{link.pk}"


def _language_for(request: HttpRequest, link: VendorLink) -> str:
    language = request.session.get(language_session_key(link)) or link.language
    return language if language in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE


PortalView = Callable[..., HttpResponse]


def portal_view(view: PortalView) -> Callable[..., HttpResponse]:
    """Resolve the token, then call `view(request, portal, **kwargs)` in the link's language."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, token: str, **kwargs: Any) -> HttpResponse:
        if token_failures_exceeded(request):
            return _too_many_attempts(request)
        link = vendor_link_resolve(token=token)
        if link is None:
            token_failure_record(request)
            return _not_found(request, dead=vendor_link_dead(token=token))
        language = _language_for(request, link)
        # The buyer's clock: every time on these pages is in the organization's time zone.
        zone = link.assessment.organization.time_zone
        with translation.override(language), timezone.override(zone):
            try:
                response = view(
                    request, Portal(link=link, token=token, language=language), **kwargs
                )
            except Http404:
                response = _not_found(request)
        response.headers["Content-Language"] = language
        _private(response)
        return response

    return wrapper


def _private(response: HttpResponse) -> HttpResponse:
    # The token is in the URL: keep these pages out of shared caches and search engines.
    patch_cache_control(response, private=True, no_store=True)
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _not_found(request: HttpRequest, *, dead: VendorLink | None = None) -> HttpResponse:
    """The one page for whatever a link does not reach. A link that once worked (expired,
    replaced, revoked) is named by its token, so its holder is told whose link it was and whom
    to ask for a new one, in the link's language; nothing of the assessment is shown. Any other
    token learns nothing."""
    if dead is None:
        return _private(render(request, "portal/not_found.html", status=404))
    organization = dead.assessment.organization
    language = dead.language if dead.language in dict(settings.LANGUAGES) else None
    with translation.override(language or translation.get_language()):
        response = render(
            request,
            "portal/not_found.html",
            {
                "dead_link": dead,
                "organization_name": organization.display_name,
                "sender": dead.created_by,
            },
            status=404,
        )
        response.headers["Content-Language"] = translation.get_language()
    return _private(response)


def _too_many_attempts(request: HttpRequest) -> HttpResponse:
    window = _token_failure_window()
    response = render(
        request, "portal/rate_limited.html", {"minutes": max(1, window // 60)}, status=429
    )
    response.headers["Retry-After"] = str(window)
    return _private(response)
