"""Where the application may connect on someone else's behalf: the outbound-address policy.

A vendor names the probe's endpoint, so without a policy a vendor link could aim the worker at
the network it runs in (issue 28: a blind SSRF to 127.0.0.1, 10.0.0.1, 169.254.169.254). One
policy, for the probe today and any other outbound call (webhooks) tomorrow:

* the host is resolved, and every address it resolves to is checked: loopback, private,
  link-local, unique-local, multicast, reserved, unspecified and cloud metadata addresses (and
  the metadata host names) are refused, unless the operator lists their network
  (`PROBE_ALLOWED_NETWORKS` for the probe, `WEBHOOK_ALLOWED_NETWORKS` for webhooks: CIDRs, e.g.
  `127.0.0.0/8` for the demo and the tests);
* the check is made again on the address actually connected to (`OutboundTransport`): the
  connection goes to the address that was checked, never to a second resolution, so DNS
  rebinding (a name that resolves to a public address when entered and to 127.0.0.1 when used)
  cannot get round it.

Pure Python and httpx: no Django (settings are passed in by the caller).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[IPAddress]]


def gettext_noop(message: str) -> str:
    """Marks a message for translation without importing Django (the callers translate it)."""
    return message


REFUSED_ADDRESS_MESSAGE = gettext_noop(
    "%(host)s resolves to %(address)s, an internal address (%(kind)s); only public addresses "
    "can be reached, unless the operator setting %(setting)s lists its network."
)
METADATA_HOST_MESSAGE = gettext_noop(
    "%(host)s is a cloud metadata service, which is never reached, unless the operator setting "
    "%(setting)s lists its network."
)
UNRESOLVED_MESSAGE = gettext_noop("%(host)s does not resolve to an address.")

# Cloud instance metadata: the addresses are link-local or private already, named here so that
# the message says what they are and so that a network allowed by the operator never opens them.
METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server
    )
)


class TemplateText(str):
    """An English message formatted from a template, keeping the template and its params so
    that a caller with Django can show it in the reader's language: `_(t.template) % t.params`."""

    template: str
    params: dict[str, str]

    def __new__(cls, template: str, params: dict[str, str]) -> TemplateText:
        text = super().__new__(cls, template % params if params else template)
        text.template = template
        text.params = params
        return text


class OutboundRefused(httpcore.ConnectError):
    """The address may not be reached. An httpcore connection error, so that an httpx client
    reports it as `httpx.ConnectError` with this message."""

    def __init__(self, message: str, params: dict[str, str]) -> None:
        self.message = message
        self.text = TemplateText(message, params)
        super().__init__(str(self.text))


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDRs (`127.0.0.0/8`, `fd00::/8`, a single address); ValueError naming a bad one."""
    networks = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError as exc:
            raise ValueError(f"not a network (CIDR): {text!r}") from exc
    return tuple(networks)


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to (an address literal resolves to itself)."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return []
    found: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    return found


def internal_kind(address: IPAddress) -> str | None:
    """What makes an address internal ("loopback", "private", …), or None for a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return internal_kind(address.ipv4_mapped)
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    for kind, flag in (
        ("loopback", address.is_loopback),
        ("unspecified", address.is_unspecified),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
    ):
        if flag:
            return kind
    if isinstance(address, ipaddress.IPv6Address) and address in _UNIQUE_LOCAL:
        return "unique-local"
    if address.is_private or not address.is_global:
        return "private"
    return None


_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


@dataclass(frozen=True)
class OutboundPolicy:
    """Which addresses an outbound call may reach: public ones, and the operator's networks."""

    allowed_networks: tuple[IPNetwork, ...] = ()
    resolve: Resolver = field(default=resolve_host, compare=False)
    setting: str = "PROBE_ALLOWED_NETWORKS"  # the operator setting that lists the networks

    def allows(self, address: IPAddress) -> bool:
        return any(address.version == n.version and address in n for n in self.allowed_networks)

    def addresses(self, host: str, port: int) -> list[IPAddress]:
        """The addresses of `host` to connect to, every one checked; OutboundRefused names the
        first refused one (a name with one internal address among public ones is refused: the
        connection could go to any of them)."""
        name = host.strip("[]").rstrip(".").lower()
        addresses = self.resolve(name, port)
        if name in METADATA_HOSTS and not (addresses and all(self.allows(a) for a in addresses)):
            raise OutboundRefused(METADATA_HOST_MESSAGE, {"host": host, "setting": self.setting})
        if not addresses:
            raise OutboundRefused(UNRESOLVED_MESSAGE, {"host": host})
        for address in addresses:
            kind = internal_kind(address)
            if kind is not None and not self.allows(address):
                raise OutboundRefused(
                    REFUSED_ADDRESS_MESSAGE,
                    {"host": host, "address": str(address), "kind": kind, "setting": self.setting},
                )
        return addresses

    def problem(self, host: str, port: int) -> OutboundRefused | None:
        """Why `host` may not be reached (None when it may, or when it does not resolve now:
        the connection checks again, and a name that does not resolve is never connected to)."""
        try:
            self.addresses(host, port)
        except OutboundRefused as refused:
            if refused.message == UNRESOLVED_MESSAGE:
                return None
            return refused
        return None

    def within_allowed_networks(self, host: str, port: int) -> bool:
        """True when every address of `host` is in a network the operator listed."""
        addresses = self.resolve(host.strip("[]").rstrip(".").lower(), port)
        return bool(addresses) and all(self.allows(a) for a in addresses)


class _CheckedBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting only to addresses the policy allows: the host is
    resolved here once, checked, and the socket opened to the checked address (TLS still
    verifies the certificate against the host name)."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self._policy.addresses(host, port)
        error: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                error = exc
        assert error is not None  # noqa: S101 - addresses() never returns an empty list
        raise error

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        raise OutboundRefused(gettext_noop("Unix sockets are never reached."), {})


class OutboundTransport(httpx.HTTPTransport):
    """An httpx transport whose every connection goes through the policy (no proxy)."""

    def __init__(self, policy: OutboundPolicy, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # httpx builds its httpcore pool itself; the backend is what opens the sockets.
        self._pool._network_backend = _CheckedBackend(policy)


def outbound_client(policy: OutboundPolicy, **kwargs: Any) -> httpx.Client:
    """An httpx client for calls aimed by someone else: the policy on every connection, no
    proxy or .netrc from the environment, redirects never followed."""
    return httpx.Client(
        transport=OutboundTransport(policy),
        follow_redirects=False,
        trust_env=False,
        **kwargs,
    )
