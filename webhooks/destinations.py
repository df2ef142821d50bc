"""Where a webhook may be delivered: the outbound-address policy applied to endpoints.

An endpoint is an `https://` address on the public internet. Plain `http://` and private,
loopback, link-local or metadata addresses are refused unless the operator's
WEBHOOK_ALLOWED_NETWORKS lists them (CIDRs; the tests and the demo allow 127.0.0.0/8). The
address checked is the one connected to, so a name that resolves elsewhere later (DNS
rebinding) cannot get round the check. Redirects are never followed.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.utils.translation import gettext as _

from core.outbound import OutboundPolicy, internal_kind, outbound_client, parse_networks


def webhook_policy() -> OutboundPolicy:
    """The one outbound-address policy (core.outbound), with the webhooks' own networks."""
    return OutboundPolicy(
        allowed_networks=parse_networks(settings.WEBHOOK_ALLOWED_NETWORKS),
        setting="WEBHOOK_ALLOWED_NETWORKS",
    )


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
    policy = webhook_policy()
    addresses = policy.resolve(host, port)
    refused = policy.problem(host, port)
    if refused is not None or not addresses:
        if not addresses and refused is None:
            return _("The host %(host)s cannot be found.") % {"host": host}
        shown = [str(a) for a in addresses if internal_kind(a) and not policy.allows(a)] or [host]
        return _(
            "%(host)s is a private, loopback or reserved address (%(addresses)s): webhooks go "
            "to public https:// endpoints only."
        ) % {"host": host, "addresses": ", ".join(sorted(shown))}
    if parts.scheme == "http" and not policy.within_allowed_networks(host, port):
        return _("Enter an https:// address: plain http:// would send the events unencrypted.")
    return None


def http_client(*, timeout: float) -> httpx.Client:
    """The client that delivers: every connection checked against the policy on the address
    actually connected to, no redirects followed, no proxies from the environment."""
    return outbound_client(webhook_policy(), timeout=timeout)
