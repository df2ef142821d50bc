"""The documented production environment passes `check --deploy` without a warning, and the
development secret key is refused outright when DEBUG is off."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The production settings of docs/operations.md's table (what an operator sets).
PRODUCTION_ENV = {
    "DEBUG": "false",
    "SECRET_KEY": "k2Vd0n9-sF1yq3Tz7uWcB8eHjLmPxR4aG6oN5iQvZ_tYbD2hEsK1wUfJ9cMlAgXp",
    "ALLOWED_HOSTS": "avia.example.com",
    "SITE_URL": "https://avia.example.com",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto=https",
    "TRUSTED_PROXIES": "127.0.0.1",
    "PROBE_KEYS_FERNET_KEY": "u5rBk3mV0cO9j8kqgD0T7d2c1m5YbQ6oWqKxY4fA0tE=",
}


def manage(*args, **env):
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in PRODUCTION_ENV and key != "DJANGO_SETTINGS_MODULE"
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_documented_production_env():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNINGS" not in result.stdout + result.stderr


def test_the_development_key_is_refused_when_debug_is_off():
    env = {**PRODUCTION_ENV}
    del env["SECRET_KEY"]
    result = manage("check", **env)
    assert result.returncode != 0
    assert "SECRET_KEY is the development key while DEBUG is false" in result.stderr


@pytest.mark.parametrize(
    "key",
    ["x", "   ", "a" * 60, "abcd" * 20, "k2Vd0n9-sF1yq3Tz7uWcB8eHjLmPxR4aG6oN5iQvZ_tYbD2hEs"[:49]],
    ids=["one-character", "three-spaces", "one-character-repeated", "four-unique", "49-long"],
)
def test_a_weak_secret_key_is_refused_when_debug_is_off(key):
    """Issue 28, break 8: "x" and three spaces were accepted (check --deploy only warned)."""
    result = manage("check", **{**PRODUCTION_ENV, "SECRET_KEY": key})
    assert result.returncode != 0
    assert "SECRET_KEY is too weak" in result.stderr
    assert "get_random_secret_key" in result.stderr
    # Development keeps working with any key.
    assert manage("check", **{**PRODUCTION_ENV, "SECRET_KEY": key, "DEBUG": "true"}).returncode == 0


def test_a_public_host_without_debug_set_is_refused():
    """DEBUG defaults to on for development: a deployment that names its host but forgot
    DEBUG=false must not start with debug pages and the development key."""
    env = {key: value for key, value in PRODUCTION_ENV.items() if key != "DEBUG"}
    del env["SECRET_KEY"]
    result = manage("check", **env)
    assert result.returncode != 0
    assert "DEBUG is on by default (development), but ALLOWED_HOSTS names avia.example.com" in (
        result.stderr
    )
    # Debugging on that host stays possible, when asked for.
    assert manage("check", **env, DEBUG="true").returncode == 0


def test_without_the_https_settings_check_deploy_warns():
    env = {**PRODUCTION_ENV, "SECURE_SSL_REDIRECT": "false", "SECURE_HSTS_SECONDS": "0"}
    result = manage("check", "--deploy", **env)
    assert "security.W008" in result.stdout + result.stderr
    assert "security.W004" in result.stdout + result.stderr


def test_the_mail_server_is_set_from_the_environment():
    """Invitations, reminders and password resets need a real mail server in production: the
    `EMAIL_*` variables of docs/operations.md configure it (they were ignored: SMTP went to
    localhost:25)."""
    mail_env = {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.com",
        "EMAIL_PORT": "587",
        "EMAIL_HOST_USER": "avia",
        "EMAIL_HOST_PASSWORD": "s3cret",
        "EMAIL_USE_TLS": "true",
        "EMAIL_TIMEOUT": "20",
    }
    result = manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; print(s.EMAIL_HOST, s.EMAIL_PORT, "
        "s.EMAIL_HOST_USER, s.EMAIL_HOST_PASSWORD, s.EMAIL_USE_TLS, s.EMAIL_USE_SSL, "
        "s.EMAIL_TIMEOUT)",
        **PRODUCTION_ENV,
        **mail_env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "smtp.example.com",
        "587",
        "avia",
        "s3cret",
        "True",
        "False",
        "20",
    ]
