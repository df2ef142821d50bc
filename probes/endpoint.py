"""What the probe is pointed at, checked before anything is sent: the endpoint's address and
the two test-tenant keys.

Pure (no Django): the command line, the services and the Celery task all validate through here.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

from core.outbound import OutboundPolicy


def gettext_noop(message: str) -> str:
    """Marks a message for translation (Django's makemessages finds it by this name) without
    importing Django: the services translate it, the command line prints it as it is."""
    return message


HTTPS_ONLY_MESSAGE = gettext_noop(
    "Plain http:// is only allowed to a network the operator setting PROBE_ALLOWED_NETWORKS "
    "lists, or when the operator setting PROBE_ALLOW_HTTP is on; use https://."
)
MALFORMED_MESSAGE = gettext_noop("The base URL is malformed: expected https://host[:port][/path].")


class ProbeInputError(ValueError):
    """Input the probe refuses before sending anything; `errors` maps a field to messages."""

    def __init__(self, errors: Mapping[str, list[str]]) -> None:
        self.errors = {field: list(messages) for field, messages in errors.items()}
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in self.errors.items()))


class ApiKey:
    """A test tenant's API key. Its text leaves this object only through `reveal()`, for the
    Authorization header: repr, str, logging and pickling never show it."""

    __slots__ = ("_secret",)

    def __init__(self, secret: str) -> None:
        secret = secret.strip()
        if not secret:
            raise ValueError("empty API key")
        self._secret = secret

    def reveal(self) -> str:
        return self._secret

    def same_as(self, other: ApiKey) -> bool:
        return hmac.compare_digest(self._secret.encode(), other._secret.encode())

    def __repr__(self) -> str:
        return "ApiKey(<hidden>)"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        # A key must never travel in a task message or a cache: ids do, keys stay encrypted.
        raise TypeError("an ApiKey cannot be pickled")


API_VERSION_PATH = "/v1"
CHAT_COMPLETIONS_PATH = "/v1/chat/completions"


def base_url_normalise(base_url: str) -> str:
    """The one spelling of an endpoint's base URL: `https://host`, `https://host/`,
    `https://host/v1` and `https://host/v1/` are all `https://host` (the probe adds
    `/v1/chat/completions` itself). The CLI, the services and the client all go through here."""
    text = (base_url or "").strip().rstrip("/")
    try:
        parts = urlsplit(text)
    except ValueError:
        return text  # not a URL; endpoint_validate says why
    path = parts.path.rstrip("/")
    if path.lower().endswith(API_VERSION_PATH):
        path = path[: -len(API_VERSION_PATH)].rstrip("/")
    return urlunsplit(parts._replace(path=path))


def chat_completions_url(base_url: str) -> str:
    return base_url_normalise(base_url) + CHAT_COMPLETIONS_PATH


def endpoint_validate(base_url: str, *, allow_http: bool, policy: OutboundPolicy) -> str:
    """The base URL, normalised (`base_url_normalise`); raises ProbeInputError naming the
    field `base_url` and the reason. The host must be one the outbound-address policy lets the
    probe reach (core.outbound; the client checks again on connecting). Plain http:// is for
    the operator's own networks (PROBE_ALLOWED_NETWORKS: the demo and the tests on loopback) or
    everywhere with PROBE_ALLOW_HTTP."""
    problem = _endpoint_problem(base_url, allow_http=allow_http, policy=policy)
    if problem:
        raise ProbeInputError({"base_url": [problem]})
    return base_url_normalise(base_url)


def _endpoint_problem(base_url: str, *, allow_http: bool, policy: OutboundPolicy) -> str | None:
    text = (base_url or "").strip()
    if not text:
        return gettext_noop("The endpoint's base URL is required.")
    if any(ch.isspace() or ord(ch) < 32 for ch in text) or len(text) > 2000:
        return MALFORMED_MESSAGE
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number 0-65535
    except ValueError:
        return MALFORMED_MESSAGE
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return MALFORMED_MESSAGE
    if parts.username is not None or parts.password is not None:
        return gettext_noop("The base URL must not contain a user name or password.")
    if parts.query or parts.fragment:
        return gettext_noop("The base URL must not have a query or fragment.")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    refused = policy.problem(parts.hostname, port)
    if refused is not None:
        return refused.text
    if (
        parts.scheme == "http"
        and not allow_http
        and not policy.within_allowed_networks(parts.hostname, port)
    ):
        return HTTPS_ONLY_MESSAGE
    return None
