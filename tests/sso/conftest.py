"""The tests' OpenID provider (tests/sso/oidc_provider.py), run as real processes on loopback:
one well-behaved, and one per way a sign-in must be refused."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from django.test import Client

from accounts.models import Organization
from core.outbound import parse_networks
from sso.models import IdentityProvider
from sso.services import ProviderSettings, provider_configure
from tests.conftest import LOOPBACK

PROVIDER = Path(__file__).with_name("oidc_provider.py")
CLIENT_ID = "avia"
CLIENT_SECRET = "provider-client-secret"


@pytest.fixture(autouse=True)
def sso_reaches_loopback(settings):
    """The tests' provider listens on loopback, which the outbound-address policy refuses
    unless the operator lists it (as scripts/run.sh does for the demo). Tests of the policy
    itself set their own."""
    settings.SSO_ALLOWED_NETWORKS = parse_networks([LOOPBACK])


@dataclass(frozen=True)
class Provider:
    issuer: str
    process: subprocess.Popen


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(*options: str) -> Provider:
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(PROVIDER),
            "--port",
            str(port),
            "--client-id",
            CLIENT_ID,
            "--client-secret",
            CLIENT_SECRET,
            *options,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "AUTHLIB_INSECURE_TRANSPORT": "1"},
    )
    return Provider(issuer=f"http://127.0.0.1:{port}", process=process)


def _wait_ready(provider: Provider) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if provider.process.poll() is not None:
            raise RuntimeError(provider.process.stderr.read().decode())  # type: ignore[union-attr]
        try:
            httpx.get(provider.issuer + "/.well-known/openid-configuration", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"the test provider at {provider.issuer} did not start")


@pytest.fixture(scope="session")
def oidc_providers() -> Iterator[dict[str, Provider]]:
    good = _start()
    providers = {
        "good": good,
        # A second instance whose tokens name the first one's issuer.
        "wrong_issuer": _start("--claimed-issuer", good.issuer),
        "wrong_audience": _start("--audience", "another-application"),
        "expired": _start("--id-token-ttl", "-600"),
        "foreign_email": _start("--email", "mallory@elsewhere.test"),
        "unverified": _start("--email-unverified"),
        # Discovery documents that send the server's calls to internal addresses.
        "internal_token": _start("--token-endpoint", "http://169.254.169.254/token"),
        "internal_jwks": _start("--jwks-uri", "https://10.0.0.1/jwks"),
    }
    try:
        for provider in providers.values():
            _wait_ready(provider)
        yield providers
    finally:
        for provider in providers.values():
            provider.process.terminate()
        for provider in providers.values():
            provider.process.wait(timeout=10)


def configure(
    organization: Organization,
    provider: Provider | str,
    *,
    allow_join: bool = False,
    require_sso: bool = False,
    break_glass_owner_id: int | None = None,
    default_role: str = "viewer",
) -> IdentityProvider:
    """Save the organization's provider: one of the test provider processes, or an issuer URL
    that nothing is called at."""
    return provider_configure(
        organization=organization,
        settings=ProviderSettings(
            issuer=provider if isinstance(provider, str) else provider.issuer,
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            email_domains=["acme.test"],
            allow_join=allow_join,
            default_role=default_role,
            require_sso=require_sso,
            break_glass_owner_id=break_glass_owner_id,
        ),
    )


def provider_leg(location: str) -> str:
    """Follow the redirect to the provider over real HTTP; return where it sends the browser
    back (its sign-in and consent step approves at once)."""
    response = httpx.get(location, follow_redirects=False, timeout=10)
    assert response.status_code == 302, response.text
    return response.headers["location"]


def sso_sign_in(client: Client, email: str) -> tuple[object, str]:
    """The whole browser round trip; returns AVIA's answer to the callback and its URL."""
    start = client.post("/accounts/sso/", {"email": email})
    assert start.status_code == 200 and "provider_url" in start.context, start.content
    back = urlsplit(provider_leg(start.context["provider_url"]))
    callback = f"{back.path}?{back.query}"
    return client.get(callback), callback
