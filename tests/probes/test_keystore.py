"""The keys' encryption at rest: a Fernet key from the environment, required in production."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from probes.endpoint import ApiKey
from probes.keystore import KeyUnreadable, key_decrypt, key_encrypt

from .vendor import ROOT


def load_settings(**env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "PROBE_KEYS_FERNET_KEY"}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**environment, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_settings_refuse_to_start_without_a_key():
    production = {"DEBUG": "false", "SECRET_KEY": "a-long-random-production-key-" + "x" * 40}
    refused = load_settings(**production)
    assert refused.returncode != 0
    assert "PROBE_KEYS_FERNET_KEY is not set" in refused.stderr
    assert (
        load_settings(**production, PROBE_KEYS_FERNET_KEY=Fernet.generate_key().decode()).returncode
        == 0
    )


def test_keys_survive_a_rotation_and_not_a_wrong_key(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.PROBE_KEYS_FERNET_KEYS = [old]
    stored = key_encrypt(ApiKey("sk-rotate-me"))
    assert "sk-rotate-me" not in stored

    settings.PROBE_KEYS_FERNET_KEYS = [new, old]
    assert key_decrypt(stored).reveal() == "sk-rotate-me"

    settings.PROBE_KEYS_FERNET_KEYS = [new]
    with pytest.raises(KeyUnreadable) as unreadable:
        key_decrypt(stored)
    assert "sk-rotate-me" not in str(unreadable.value)


def test_a_malformed_fernet_key_is_a_clear_configuration_error(settings):
    settings.PROBE_KEYS_FERNET_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured, match="PROBE_KEYS_FERNET_KEY"):
        key_encrypt(ApiKey("sk-x"))
