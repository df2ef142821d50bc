"""The OpenID Connect relying party: discovery, the authorization-code flow with PKCE, state
and nonce (Authlib's OAuth 2 client), and the ID token's checks (joserfc, Authlib's JOSE
library): signature against the issuer's JWKS, `iss`, `aud`, `exp`/`iat` and `nonce`.

Each organization has its own provider, so the client is made per request from its settings
rather than registered once in Django settings.

An owner names the issuer, and the issuer's discovery document names the token and key
endpoints: every call to them (discovery, JWKS, token) goes through the one outbound-address
policy (`core/outbound.py`), with the operator's SSO_ALLOWED_NETWORKS, so that neither can aim
the web server at an internal address (169.254.169.254, 127.0.0.1, 10.0.0.1, …). The check is
made on the address actually connected to (DNS rebinding cannot get round it), and the
discovery document's endpoints are checked before anything is sent to them. Calls use httpx
(Authlib's own httpx client is deprecated in favour of an httpx2 package the project does not
use; its protocol helpers are used).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from django.conf import settings
from django.utils.translation import gettext as _
from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ExpiredTokenError,
    InvalidClaimError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import KeySet

from core.outbound import OutboundPolicy, OutboundRefused, outbound_client

TIMEOUT_SECONDS = 10
# Clock difference tolerated between AVIA and the provider.
LEEWAY_SECONDS = 60
SCOPE = "openid email"


class SsoRefused(Exception):
    """A sign-in that cannot go on; the message is for the person signing in."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class ProviderEndpoints:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str


@dataclass(frozen=True)
class PendingFlow:
    """What the callback must find again: kept in the session under the state."""

    state: str
    nonce: str
    code_verifier: str


def _unreachable() -> SsoRefused:
    return SsoRefused(
        _("Your organization's sign-in service cannot be reached. Try again later."),
        code="unreachable",
    )


def sso_outbound_policy() -> OutboundPolicy:
    """Where single sign-on may connect: public addresses and the operator's
    SSO_ALLOWED_NETWORKS (core.outbound, the probe's and the webhooks' policy)."""
    return OutboundPolicy(
        allowed_networks=settings.SSO_ALLOWED_NETWORKS, setting="SSO_ALLOWED_NETWORKS"
    )


def refusal_text(refused: OutboundRefused) -> str:
    """The policy's reason, in the reader's language."""
    return _(refused.text.template) % refused.text.params


def internal_address_refusal(refused: OutboundRefused) -> SsoRefused:
    return SsoRefused(
        _(
            "Your organization's sign-in service cannot be used: %(reason)s Ask an owner to check "
            "the issuer URL."
        )
        % {"reason": refusal_text(refused)},
        code="internal_address",
    )


def url_host_port(url: str) -> tuple[str, int] | None:
    """The host and port an http(s) URL connects to; None when it names none."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return (parts.hostname, port) if parts.hostname else None


def url_problem(url: str) -> OutboundRefused | None:
    """Why single sign-on may not call `url` (an internal address), or None (a URL without a
    host fails on calling, as unreachable)."""
    target = url_host_port(url)
    return sso_outbound_policy().problem(*target) if target else None


def _refused_by_policy(error: httpx.HTTPError) -> OutboundRefused | None:
    cause = error.__cause__ or error.__context__
    return cause if isinstance(cause, OutboundRefused) else None


def _send(method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One call to the provider, through the outbound-address policy (checked on connecting)."""
    try:
        with outbound_client(sso_outbound_policy(), timeout=TIMEOUT_SECONDS) as client:
            return client.request(method, url, **kwargs)
    except httpx.HTTPError as error:
        if (refused := _refused_by_policy(error)) is not None:
            raise internal_address_refusal(refused) from None
        raise _unreachable() from None


def _get_json(url: str) -> dict[str, Any]:
    response = _send("GET", url)
    try:
        response.raise_for_status()
        data = response.json()
    except (httpx.HTTPError, ValueError):
        raise _unreachable() from None
    if not isinstance(data, dict):
        raise _unreachable()
    return data


def discover(issuer: str) -> ProviderEndpoints:
    """The provider's endpoints from `{issuer}/.well-known/openid-configuration`; the document
    must name the same issuer (OpenID Connect Discovery 1.0, section 4.3)."""
    data = _get_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if data.get("issuer") != issuer:
        raise SsoRefused(_wrong_issuer(), code="wrong_issuer")
    try:
        endpoints = ProviderEndpoints(
            issuer=issuer,
            authorization_endpoint=str(data["authorization_endpoint"]),
            token_endpoint=str(data["token_endpoint"]),
            jwks_uri=str(data["jwks_uri"]),
        )
    except KeyError:
        raise _unreachable() from None
    # The server calls these two (the browser goes to the authorization endpoint): the document
    # may name any host, so each is checked before the sign-in starts (and again on connecting).
    for url in (endpoints.token_endpoint, endpoints.jwks_uri):
        if (refused := url_problem(url)) is not None:
            raise internal_address_refusal(refused)
    return endpoints


def authorization_url(
    *,
    endpoints: ProviderEndpoints,
    client_id: str,
    redirect_uri: str,
    login_hint: str,
) -> tuple[str, PendingFlow]:
    """Where to send the browser, and the secrets the callback checks against."""
    flow = PendingFlow(
        state=generate_token(32), nonce=generate_token(32), code_verifier=generate_token(64)
    )
    url = prepare_grant_uri(
        endpoints.authorization_endpoint,
        client_id=client_id,
        response_type="code",
        redirect_uri=redirect_uri,
        scope=SCOPE,
        state=flow.state,
        nonce=flow.nonce,
        code_challenge=create_s256_code_challenge(flow.code_verifier),
        code_challenge_method="S256",
        login_hint=login_hint,
    )
    return url, flow


def _wrong_issuer() -> str:
    return _(
        "The sign-in was refused: the token was issued by another provider than your organization's."
    )


def _wrong_audience() -> str:
    return _("The sign-in was refused: the token was issued for another application than AVIA.")


def _unreadable() -> SsoRefused:
    return SsoRefused(_("The sign-in was refused: the token cannot be read."), code="unreadable")


def signed_in_claims(
    *,
    endpoints: ProviderEndpoints,
    client_id: str,
    client_secret: str,
    redirect_uri: str,
    code: str,
    flow: PendingFlow,
) -> dict[str, Any]:
    """Exchange the code (with the PKCE verifier) and return the checked ID token's claims."""
    refused = SsoRefused(
        _("Your organization's sign-in service refused the sign-in. Start again."),
        code="token_refused",
    )
    response = _send(
        "POST",
        endpoints.token_endpoint,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": flow.code_verifier,
        },
        auth=(client_id, client_secret),  # client_secret_basic, the default method
        headers={"Accept": "application/json"},
    )
    if response.status_code != 200:
        raise refused
    try:
        token = response.json()
    except ValueError:
        raise refused from None
    if not isinstance(token, dict):
        raise refused
    id_token = token.get("id_token")
    if not isinstance(id_token, str):
        raise SsoRefused(
            _("Your organization's sign-in service sent no ID token."), code="no_id_token"
        )
    keys = KeySet.import_key_set(_get_json(endpoints.jwks_uri))  # type: ignore[arg-type]
    return validate_id_token(
        id_token, keys=keys, issuer=endpoints.issuer, client_id=client_id, nonce=flow.nonce
    )


def validate_id_token(
    id_token: str, *, keys: KeySet, issuer: str, client_id: str, nonce: str
) -> dict[str, Any]:
    """The claims of an ID token whose signature, issuer, audience, times and nonce hold."""
    try:
        decoded = jwt.decode(id_token, keys, algorithms=["RS256", "ES256", "PS256"])
    except BadSignatureError:
        raise SsoRefused(
            _("The sign-in was refused: the token's signature is not valid."), code="bad_signature"
        ) from None
    except JoseError:
        raise _unreadable() from None
    claims = decoded.claims
    try:
        jwt.JWTClaimsRegistry(
            leeway=LEEWAY_SECONDS, exp={"essential": True}, iat={"essential": True}
        ).validate(claims)
    except ExpiredTokenError:
        raise SsoRefused(
            _("The sign-in was refused: the token has expired. Start again."), code="expired"
        ) from None
    except JoseError:
        raise _unreadable() from None
    # One claim at a time, so the refusal names what was wrong.
    checks = [
        (
            jwt.JWTClaimsRegistry(leeway=LEEWAY_SECONDS, iss={"essential": True, "value": issuer}),
            SsoRefused(_wrong_issuer(), code="wrong_issuer"),
        ),
        (
            jwt.JWTClaimsRegistry(
                leeway=LEEWAY_SECONDS, aud={"essential": True, "value": client_id}
            ),
            SsoRefused(_wrong_audience(), code="wrong_audience"),
        ),
        (
            jwt.JWTClaimsRegistry(leeway=LEEWAY_SECONDS, nonce={"essential": True, "value": nonce}),
            SsoRefused(
                _(
                    "The sign-in was refused: the token does not belong to this sign-in. Start again."
                ),
                code="wrong_nonce",
            ),
        ),
    ]
    for registry, refusal in checks:
        try:
            registry.validate(claims)
        except (InvalidClaimError, MissingClaimError):
            raise refusal from None
    azp = claims.get("azp")
    if isinstance(claims.get("aud"), list) and len(claims["aud"]) > 1 and azp != client_id:
        raise SsoRefused(_wrong_audience(), code="wrong_audience")
    return dict(claims)
