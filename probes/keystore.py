"""The probe's test-tenant keys at rest: Fernet (AES-128-CBC with HMAC-SHA256) from the
`cryptography` package, keyed by PROBE_KEYS_FERNET_KEY (a list: the first key encrypts, every
one decrypts, so a key can be rotated)."""

from __future__ import annotations

from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .endpoint import ApiKey


class KeyUnreadable(Exception):
    """A stored key cannot be decrypted (tampered with, or encrypted under a retired key)."""


@cache
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    try:
        return MultiFernet([Fernet(key.encode()) for key in keys])
    except (ValueError, TypeError) as exc:
        # The message names the setting, never the value.
        raise ImproperlyConfigured(
            "PROBE_KEYS_FERNET_KEY must be one or more comma-separated Fernet keys "
            "(32 url-safe base64-encoded bytes each)"
        ) from exc


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.PROBE_KEYS_FERNET_KEYS))


def key_encrypt(key: ApiKey) -> str:
    return fernet().encrypt(key.reveal().encode()).decode()


def key_decrypt(ciphertext: str) -> ApiKey:
    try:
        return ApiKey(fernet().decrypt(ciphertext.encode()).decode())
    except (InvalidToken, ValueError):
        raise KeyUnreadable("a stored probe key cannot be decrypted") from None
