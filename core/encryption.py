"""Secrets AVIA must read back (the probe's test-tenant keys, webhook signing secrets), kept at
rest as Fernet ciphertext (AES-128-CBC with HMAC-SHA256, from `cryptography`), keyed by the
operator's PROBE_KEYS_FERNET_KEY: a list, the first key encrypts and every one decrypts, so a
key can be rotated."""

from __future__ import annotations

from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretUnreadable(Exception):
    """A stored secret cannot be decrypted (tampered with, or encrypted under a retired key)."""


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


def secret_encrypt(secret: str) -> str:
    return fernet().encrypt(secret.encode()).decode()


def secret_decrypt(ciphertext: str) -> str:
    try:
        return fernet().decrypt(ciphertext.encode()).decode()
    except (InvalidToken, ValueError):
        raise SecretUnreadable("a stored secret cannot be decrypted") from None
