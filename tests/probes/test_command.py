"""`manage.py probe` against the reference vendor, each as a real process on a loopback port:
real HTTP, no mocked client. Each mode gives the results probe.md describes; bad input exits 2,
an unreachable endpoint (or one that refuses both keys) exits 3, and the keys never appear in
what the command prints."""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import LOOPBACK

from .vendor import DECLARED_CONTEXT, MODEL, ROOT, closed_loopback_port, reference_vendor

KEY_A = f"sk-tenant-a-{secrets.token_hex(16)}"
KEY_B = f"sk-tenant-b-{secrets.token_hex(16)}"
# Small samples and prefixes keep a whole probe to seconds; a high rate cap too (the cap has
# its own test in test_probe.py).
FAST = ["--samples", "6", "--prefix-tokens", "1024", "--rate", "50"]


def run_probe(*args: str, base_url: str | None = None, env: dict[str, str] | None = None):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PROBE_")}
    environment |= {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TEST_KEY_A": KEY_A,
        "TEST_KEY_B": KEY_B,
        "PROBE_ALLOWED_NETWORKS": LOOPBACK,  # the reference vendor listens there
        **(env or {}),
    }
    command = [sys.executable, "manage.py", "probe"]
    if base_url is not None:
        command += [
            "--base-url", base_url, "--model", MODEL,
            "--declared-context", str(DECLARED_CONTEXT),
            "--key-a-env", "TEST_KEY_A", "--key-b-env", "TEST_KEY_B",
        ]  # fmt: skip
    completed = subprocess.run(
        [*command, *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )
    for secret in (KEY_A, KEY_B):
        assert secret not in completed.stdout and secret not in completed.stderr
    return completed


def probe_json(completed) -> dict:
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def assert_probe_md_shape(result: dict, base_url: str) -> None:
    """The keys of probe.md's example, with their types."""
    assert result["endpoint"] == base_url
    assert (result["model"], result["declared_context"]) == (MODEL, DECLARED_CONTEXT)
    assert isinstance(result["tokens_spent"], int) and result["tokens_spent"] > 0
    assert result["started"].endswith("Z") and result["finished"] >= result["started"]
    checks = result["checks"]
    assert set(checks["oversize"]) >= {"result", "below", "above"}
    assert set(checks["oversize"]["below"]) >= {"prompt_tokens", "status"}
    assert set(checks["canary"]) >= {"result", "pairs", "hits"}
    assert set(checks["prefix_cache"]) >= {
        "result",
        "samples",
        "p_cross_tenant",
        "p_same_tenant",
        "median_ttft_ms",
    }
    assert set(checks["prefix_cache"]["median_ttft_ms"]) == {"hit", "miss"}
    # The checks' own spending plus the two calibration requests.
    assert result["tokens_spent"] > sum(check["tokens_spent"] for check in checks.values())


def test_the_launch_day_vendor_accepts_the_oversized_prompt_and_leaks(tmp_path):
    with reference_vendor(tmp_path, "launch-day") as vendor:
        result = probe_json(run_probe(*FAST, base_url=vendor.base_url))
        received = vendor.requests()

    assert_probe_md_shape(result, vendor.base_url)
    oversize = result["checks"]["oversize"]
    assert oversize["result"] == "accepted"
    assert (oversize["below"]["status"], oversize["above"]["status"]) == (200, 200)
    # About 90 % and 110 % of the declared context, as the vendor itself counted them.
    assert 0.85 * DECLARED_CONTEXT <= oversize["below"]["prompt_tokens"] <= 0.92 * DECLARED_CONTEXT
    assert 1.08 * DECLARED_CONTEXT <= oversize["above"]["prompt_tokens"] <= 1.12 * DECLARED_CONTEXT
    counted = {entry["prompt_tokens"] for entry in received if "prompt_tokens" in entry}
    assert {oversize["below"]["prompt_tokens"], oversize["above"]["prompt_tokens"]} <= counted

    canary = result["checks"]["canary"]
    assert canary["result"] == "leak" and canary["pairs"] == 3
    assert canary["hits"]
    for hit in canary["hits"]:
        # Tenant A's canary came back in an answer to tenant B (the vendor logged the leak).
        assert hit["response"].startswith("B#") and hit["owner"] == "A"
        assert hit["canary"] in hit["excerpt"]
        assert len(hit["canary"].removeprefix("AVIA-CANARY-")) == 32  # 128 random bits
    assert any(entry.get("leaked_from") for entry in received)
    assert canary["tokens_between_canaries"] <= 200
    # The launch-day vendor also shares its prefix cache across keys.
    assert result["checks"]["prefix_cache"]["result"] == "shared"


def test_the_remediated_vendor_rejects_does_not_leak_and_isolates_its_cache(tmp_path):
    with reference_vendor(tmp_path, "remediated") as vendor:
        result = probe_json(run_probe(*FAST, base_url=vendor.base_url))

    assert_probe_md_shape(result, vendor.base_url)
    checks = result["checks"]
    assert checks["oversize"]["result"] == "rejected"
    assert (checks["oversize"]["below"]["status"], checks["oversize"]["above"]["status"]) == (
        200,
        400,
    )
    assert checks["canary"] == checks["canary"] | {"result": "clean", "pairs": 3, "hits": []}
    cache = checks["prefix_cache"]
    assert cache["result"] == "isolated"
    assert cache["samples"] == 6
    # The positive control sees the cache; across tenants nothing is faster.
    assert cache["p_same_tenant"] < 0.01 <= cache["p_cross_tenant"]
    same = cache["median_ttft_ms_same_tenant"]
    assert same["hit"] < same["miss"]


def test_the_shared_cache_only_vendor_is_caught_by_timing_alone(tmp_path):
    with reference_vendor(tmp_path, "shared-cache-only") as vendor:
        result = probe_json(run_probe(*FAST, base_url=vendor.base_url))

    checks = result["checks"]
    assert checks["oversize"]["result"] == "rejected"
    assert checks["canary"]["result"] == "clean"
    cache = checks["prefix_cache"]
    assert cache["result"] == "shared" and cache["p_cross_tenant"] < 0.01
    assert cache["median_ttft_ms"]["hit"] < cache["median_ttft_ms"]["miss"]
    assert len(cache["ttft_ms"]["cross_tenant"]["hit"]) == 6


def test_a_missing_key_variable_exits_2_naming_the_variable():
    completed = run_probe(
        "--base-url", "https://127.0.0.1:9", "--model", MODEL, "--declared-context", "8192",
        "--key-a-env", "TEST_KEY_A", "--key-b-env", "AVIA_TEST_UNSET_VARIABLE",
    )  # fmt: skip

    assert completed.returncode == 2
    assert completed.stdout == ""
    assert "key_b: the environment variable AVIA_TEST_UNSET_VARIABLE" in completed.stderr


@pytest.mark.parametrize(
    ("args", "field", "reason"),
    [
        (["--base-url", "htps//api.vendor.example"], "base_url", "malformed"),
        (["--base-url", "https://api.vendor.example:99999"], "base_url", "malformed"),
        (["--base-url", "https://key@api.vendor.example"], "base_url", "user name"),
        (["--base-url", "http://api.vendor.example"], "base_url", "PROBE_ALLOW_HTTP"),
        (["--base-url", "http://10.1.2.3:8000"], "base_url", "PROBE_ALLOWED_NETWORKS"),
        (["--prefix-tokens", "512"], "prefix_tokens", "1,024"),
        (["--samples", "4"], "samples", "p < 0.01"),
        (["--declared-context", "1000"], "declared_context", "2,048"),
        (["--checks", "oversize,telepathy"], "checks", "canary"),
        (["--key-b-env", "TEST_KEY_A"], "key_b", "two different test tenants"),
    ],
    ids=[
        "malformed-url",
        "bad-port",
        "credentials-in-url",
        "plain-http",
        "plain-http-private-address",
        "short-prefix",
        "few-samples",
        "small-context",
        "unknown-check",
        "same-keys",
    ],
)
def test_bad_input_is_refused_with_the_field_and_the_reason(monkeypatch, args, field, reason):
    """In-process (the exit code is CommandError.returncode; the test above runs one for
    real). Nothing is sent: every address here is refused before any connection."""
    monkeypatch.setenv("TEST_KEY_A", KEY_A)
    monkeypatch.setenv("TEST_KEY_B", KEY_B)
    base = {
        "--base-url": "https://127.0.0.1:9",
        "--model": MODEL,
        "--declared-context": str(DECLARED_CONTEXT),
        "--key-a-env": "TEST_KEY_A",
        "--key-b-env": "TEST_KEY_B",
    }
    given = dict(zip(args[::2], args[1::2], strict=True))
    arguments = [item for pair in (base | given).items() for item in pair]

    with pytest.raises(CommandError) as refused:
        call_command("probe", *arguments, stdout=io.StringIO())

    assert refused.value.returncode == 2
    message = str(refused.value)
    assert f"{field}: " in message and reason in message
    assert KEY_A not in message and KEY_B not in message


def test_a_missing_required_option_exits_2():
    completed = run_probe("--base-url", "https://api.vendor.example")
    assert completed.returncode == 2 and "required" in completed.stderr


def test_an_unreachable_endpoint_exits_3():
    completed = run_probe(base_url=f"http://127.0.0.1:{closed_loopback_port()}")
    assert completed.returncode == 3
    assert completed.stdout == ""
    assert "cannot be reached" in completed.stderr


def test_an_endpoint_that_refuses_both_keys_exits_3_without_repeating_them(tmp_path):
    env = {"VENDOR_KEYS": f"sk-someone-else-{secrets.token_hex(8)}"}
    with reference_vendor(
        tmp_path, "remediated", "--keys-env", "VENDOR_KEYS", "--echo-refused-keys", env=env
    ) as vendor:
        completed = run_probe(base_url=vendor.base_url)
        received = vendor.requests()

    assert completed.returncode == 3
    assert "refuses both keys" in completed.stderr and "HTTP 401" in completed.stderr
    # The vendor did repeat them in its messages; run_probe asserted they were not passed on.
    assert "[redacted key]" in completed.stderr
    assert [entry["status"] for entry in received] == [401, 401]
