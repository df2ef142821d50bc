"""Where a webhook may be delivered: the outbound-address policy applied to endpoints.

An endpoint is an `https://` address on the public internet. Plain `http://` and private,
loopback, link-local or metadata addresses are refused unless the operator's
WEBHOOK_ALLOWED_NETWORKS lists them (CIDRs; the tests and the demo allow 127.0.0.0/8). The
address checked is the one connected to, so a name that resolves elsewhere later (DNS
rebinding) cannot get round the check. Redirects are never followed.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.utils.translation import gettext as _


def _allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    networks = [
        ipaddress.ip_network(cidr, strict=False) for cidr in settings.WEBHOOK_ALLOWED_NETWORKS
    ]
    if any(ip in network for network in networks):
        return True
    return ip.is_global


def destination_problem(url: str) -> str | None:
    """Why `url` cannot receive webhooks, in the reader's language; None when it can."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return _("Enter a valid web address.")
    if parts.scheme not in ("https", "http") or not host:
        return _("Enter an https:// address.")
    if parts.username or parts.password:
        return _("The address must not carry a user name or password.")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except (OSError, UnicodeError):
        return _("The host %(host)s cannot be found.") % {"host": host}
    refused = sorted(address for address in addresses if not _allowed(address))
    if refused:
        return _(
            "%(host)s is a private, loopback or reserved address (%(addresses)s): webhooks go "
            "to public https:// endpoints only."
        ) % {"host": host, "addresses": ", ".join(refused)}
    if parts.scheme == "http" and not all(_in_allowed_networks(a) for a in addresses):
        return _("Enter an https:// address: plain http:// would send the events unencrypted.")
    return None


def _in_allowed_networks(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return any(
        ip in ipaddress.ip_network(cidr, strict=False) for cidr in settings.WEBHOOK_ALLOWED_NETWORKS
    )


def http_client(*, timeout: float) -> httpx.Client:
    """The client that delivers: no redirects followed, no proxies from the environment."""
    return httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False)
