"""The signature a receiver checks: HMAC-SHA256 over the timestamp and the body."""

from __future__ import annotations

import pytest

from webhooks.signing import SignatureInvalid, signature, signature_verify

SECRET = "whsec_test"
BODY = b'{"event":"assessment.scored"}'
NOW = 1_800_000_000


def test_a_receiver_accepts_what_avia_signed():
    header = signature(secret=SECRET, timestamp=NOW, body=BODY)

    assert signature_verify(header=header, secret=SECRET, body=BODY, now=NOW + 10) == NOW


@pytest.mark.parametrize(
    ("secret", "body", "now", "why"),
    [
        ("whsec_other", BODY, NOW, "does not match"),
        (SECRET, BODY + b" ", NOW, "does not match"),
        (SECRET, BODY, NOW + 301, "tolerance"),
        (SECRET, BODY, NOW - 301, "tolerance"),
    ],
    ids=["another secret", "an altered body", "a replay, later", "a clock ahead"],
)
def test_a_receiver_refuses_what_is_not_avias_or_is_old(secret, body, now, why):
    header = signature(secret=SECRET, timestamp=NOW, body=BODY)

    with pytest.raises(SignatureInvalid, match=why):
        signature_verify(header=header, secret=secret, body=body, now=now)


def test_a_header_without_a_timestamp_is_refused():
    with pytest.raises(SignatureInvalid, match="no timestamp"):
        signature_verify(header="v1=abc", secret=SECRET, body=BODY, now=NOW)
