"""The probe's test-tenant keys at rest: Fernet ciphertext through `core.encryption`, the one
place AVIA encrypts the secrets it must read back."""

from __future__ import annotations

from core.encryption import SecretUnreadable, secret_decrypt, secret_encrypt

from .endpoint import ApiKey


class KeyUnreadable(Exception):
    """A stored key cannot be decrypted (tampered with, or encrypted under a retired key)."""


def key_encrypt(key: ApiKey) -> str:
    return secret_encrypt(key.reveal())


def key_decrypt(ciphertext: str) -> ApiKey:
    try:
        return ApiKey(secret_decrypt(ciphertext))
    except SecretUnreadable:
        raise KeyUnreadable("a stored probe key cannot be decrypted") from None
