"""The ID token checks on their own: a signature by a key outside the issuer's JWKS, and a
nonce of another sign-in (the provider process never sends either)."""

from __future__ import annotations

import time

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from sso.oidc import SsoRefused, validate_id_token

ISSUER = "https://login.acme.test"


def _token(key: RSAKey, **claims: object) -> str:
    now = int(time.time())
    payload = {"iss": ISSUER, "aud": "avia", "iat": now, "exp": now + 300, "nonce": "n-1"}
    payload.update(claims)
    return jwt.encode({"alg": "RS256", "kid": key.kid}, payload, key)


@pytest.fixture(scope="module")
def issuer_key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": "issuer"})


def _validate(token: str, key: RSAKey) -> dict:
    keys = KeySet.import_key_set({"keys": [key.as_dict(private=False)]})
    return validate_id_token(token, keys=keys, issuer=ISSUER, client_id="avia", nonce="n-1")


def test_a_good_token_passes(issuer_key):
    assert _validate(_token(issuer_key), issuer_key)["aud"] == "avia"


def test_a_token_signed_by_another_key_is_refused(issuer_key):
    forger = RSAKey.generate_key(2048, parameters={"kid": "issuer"})
    with pytest.raises(SsoRefused) as refused:
        _validate(_token(forger), issuer_key)
    assert refused.value.code == "bad_signature"


def test_a_token_of_another_sign_in_is_refused(issuer_key):
    with pytest.raises(SsoRefused) as refused:
        _validate(_token(issuer_key, nonce="n-2"), issuer_key)
    assert refused.value.code == "wrong_nonce"
