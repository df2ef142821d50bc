"""How a webhook delivery is signed, and how a receiver checks it.

Header `AVIA-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>`, the HMAC keyed by the
endpoint's secret over `"<t>." + raw body`. The timestamp is inside what is signed, so a
receiver that refuses a `t` older than a few minutes cannot be fed a recorded delivery again
(replay). The same scheme as Stripe's and GitHub's, so receivers' libraries fit it. Pure.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "AVIA-Signature"
EVENT_HEADER = "AVIA-Event"
DELIVERY_HEADER = "AVIA-Delivery"
# What a receiver should accept between the signed time and its own clock.
DEFAULT_TOLERANCE_SECONDS = 300


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The `AVIA-Signature` header's value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


class SignatureInvalid(ValueError):
    """The delivery is not AVIA's, was altered, or is too old (a replay)."""


def signature_verify(
    *,
    header: str,
    secret: str,
    body: bytes,
    now: int,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
) -> int:
    """Check a delivery as a receiver does; returns its timestamp or raises SignatureInvalid."""
    fields: dict[str, str] = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, value)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        raise SignatureInvalid("no timestamp in the signature") from None
    expected = signature(secret=secret, timestamp=timestamp, body=body).partition(",v1=")[2]
    if not hmac.compare_digest(expected, fields.get("v1", "")):
        raise SignatureInvalid("the signature does not match the body")
    if abs(now - timestamp) > tolerance_seconds:
        raise SignatureInvalid("the signature's timestamp is outside the tolerance (a replay?)")
    return timestamp
