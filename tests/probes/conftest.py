"""Fixtures of the probe's Django tests: an assessment of Acme and its probe set-up, built
through the real services."""

from __future__ import annotations

import datetime as dt
import secrets

import pytest
from django.utils import timezone

from assessments.models import Channel
from probes.services import probe_setup_save
from tests.portal.conftest import make_assessment

from .vendor import DECLARED_CONTEXT, MODEL


@pytest.fixture
def keys() -> dict[str, str]:
    """Fresh test-tenant keys, so that finding one anywhere means it leaked from this test."""
    return {
        "key_a": f"sk-tenant-a-{secrets.token_hex(16)}",
        "key_b": f"sk-tenant-b-{secrets.token_hex(16)}",
    }


@pytest.fixture
def assessment(catalog, personas):
    return make_assessment(personas.acme, personas.ava)


def setup_fields(keys: dict[str, str], **overrides) -> dict:
    now = timezone.now()
    return {
        "base_url": "http://127.0.0.1:9",
        "model_name": MODEL,
        "declared_context": DECLARED_CONTEXT,
        **keys,
        "signer_name": "Wei Chan, CISO of Inferno AI",
        "spend_ceiling_tokens": 3_000_000,
        "window_starts_at": now - dt.timedelta(hours=1),
        "window_ends_at": now + dt.timedelta(days=7),
        "channel": Channel.WEB,
        **overrides,
    }


@pytest.fixture
def set_up_probe(personas, keys):
    """`set_up_probe(assessment, **fields)`: the vendor's set-up, entered by ava."""

    def make(assessment, **overrides):
        return probe_setup_save(
            assessment=assessment, actor=personas.ava, **setup_fields(keys, **overrides)
        )

    return make
