"""The client's address, in one place: REMOTE_ADDR, or behind trusted reverse proxies the
address they report in X-Forwarded-For.

The login lockout (django-axes) and the vendor-link limit count by this address. A client can
write any X-Forwarded-For it likes, so the header is read only when the request comes from a
proxy listed in TRUSTED_PROXIES, and only its addresses appended by trusted proxies are skipped.
Hand-written (about twenty lines) rather than django-ipware: one middleware fixes REMOTE_ADDR
for every reader, instead of configuring each reader separately.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _trusted_networks(proxies: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(proxy, strict=False) for proxy in proxies)


def _is_trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in _trusted_networks(tuple(settings.TRUSTED_PROXIES)))


def forwarded_client(remote_addr: str, forwarded_for: str) -> str:
    """The right-most address of `forwarded_for` that is not a trusted proxy, when
    `remote_addr` is one; otherwise `remote_addr` itself."""
    if not _is_trusted(remote_addr):
        return remote_addr
    for hop in reversed([part.strip() for part in forwarded_for.split(",") if part.strip()]):
        if not _is_trusted(hop):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return remote_addr  # garbage in the header: keep the proxy's own address
    return remote_addr


class TrustedProxyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.TRUSTED_PROXIES:
            request.META["REMOTE_ADDR"] = forwarded_client(
                request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR", "")
            )
        return self.get_response(request)


def client_address(request: HttpRequest) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: the address TrustedProxyMiddleware left in REMOTE_ADDR (None
    when there is none, e.g. a sign-in without a real request; axes stores it as an address)."""
    return request.META.get("REMOTE_ADDR") or None
