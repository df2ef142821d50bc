"""`manage.py probe` against the reference vendor, each as a real process on a loopback port:
real HTTP, no mocked client. Each mode gives the results probe.md and probe-v2.md describe;
bad input exits 2, an unreachable endpoint (or one that refuses both keys, or a base URL
with no chat completions behind it) exits 3, and the keys never appear in what the command
prints."""

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
# Small prefixes keep a whole probe to seconds (sequential sampling stops at the first look
# that gives a verdict, usually 10 samples); a high rate cap too (the cap has its own test in
# test_probe.py). The cross-tenant test of a per-tenant cache is noise, below 0.05 one look in
# twenty; then the probe samples on, up to the default maximum of 40.
FAST = ["--samples", "40", "--prefix-tokens", "1024", "--rate", "50"]


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
    """The keys of probe.md's example and of probe-v2.md, with their types."""
    assert result["endpoint"] == base_url
    assert (result["model"], result["declared_context"]) == (MODEL, DECLARED_CONTEXT)
    assert result["served_model"] == MODEL
    assert isinstance(result["tokens_spent"], int) and result["tokens_spent"] > 0
    assert result["tokens_measured"] is True
    assert result["started"].endswith("Z") and result["finished"] >= result["started"]
    checks = result["checks"]
    assert set(checks["oversize"]) >= {
        "result",
        "below",
        "above",
        "served_context",
        "limit_stated",
        "bisection_requests",
    }
    assert set(checks["oversize"]["below"]) >= {
        "prompt_tokens",
        "status",
        "measured",
        "target_tokens",
        "percent_of_declared",
    }
    assert set(checks["canary"]) >= {"result", "pairs", "hits"}
    assert set(checks["prefix_cache"]) >= {
        "result",
        "samples",
        "max_samples",
        "looks",
        "p_cross_tenant",
        "p_same_tenant",
        "p_cross_slower_than_same",
        "median_hit_miss_ratio",
        "median_ttft_ms",
        "prefix_tokens",
    }
    assert set(checks["prefix_cache"]["median_ttft_ms"]) == {"hit", "miss"}
    assert set(checks["prefix_cache"]["median_hit_miss_ratio"]) == {"cross_tenant", "same_tenant"}
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
    # 90 % and 110 % of the declared context within ±3 %, as the vendor itself counted them.
    assert 87.3 <= oversize["below"]["percent_of_declared"] <= 92.7
    assert 106.7 <= oversize["above"]["percent_of_declared"] <= 113.3
    assert oversize["below"]["target_tokens"] == round(0.9 * DECLARED_CONTEXT)
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
    assert cache["result"] == "isolated", {k: v for k, v in cache.items() if k != "ttft_ms"}
    assert cache["max_samples"] == 40 and cache["samples"] == 5 + 5 * cache["looks"]
    # The positive control sees the cache; across tenants nothing is faster, and B's hits
    # are slower than A's: the three tests of probe-v2.md.
    assert cache["p_same_tenant"] < 0.001 and cache["p_cross_slower_than_same"] < 0.001
    assert cache["p_cross_tenant"] >= 0.05
    same = cache["median_ttft_ms_same_tenant"]
    assert same["hit"] < same["miss"]
    assert cache["median_hit_miss_ratio"]["same_tenant"] < 0.5


def test_the_shared_cache_only_vendor_is_caught_by_timing_alone(tmp_path):
    with reference_vendor(tmp_path, "shared-cache-only") as vendor:
        result = probe_json(run_probe(*FAST, base_url=vendor.base_url))

    checks = result["checks"]
    assert checks["oversize"]["result"] == "rejected"
    assert checks["canary"]["result"] == "clean"
    cache = checks["prefix_cache"]
    assert cache["result"] == "shared" and cache["p_cross_tenant"] < 0.01
    assert cache["median_ttft_ms"]["hit"] < cache["median_ttft_ms"]["miss"]
    assert (cache["samples"], cache["looks"]) == (10, 1)  # found at the first look
    assert len(cache["ttft_ms"]["cross_tenant"]["hit"]) == 10


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
    assert "/v1/chat/completions" in completed.stderr  # the message names the URL


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


def test_a_reasoning_vendor_is_read_in_reasoning_content_and_its_leak_found_there(tmp_path):
    with reference_vendor(tmp_path, "reasoning") as vendor:
        result = probe_json(run_probe(*FAST, base_url=vendor.base_url))
        received = vendor.requests()

    assert_probe_md_shape(result, vendor.base_url)
    checks = result["checks"]
    assert checks["oversize"]["result"] == "accepted"
    canary = checks["canary"]
    assert canary["result"] == "leak" and canary["hits"]
    assert {hit["field"] for hit in canary["hits"]} == {"reasoning_content"}
    assert any(entry.get("leaked_from") for entry in received)
    # Timed from the first reasoning delta: the answers' content was always "".
    assert checks["prefix_cache"]["result"] == "shared"


def test_an_over_claiming_vendor_is_overclaimed_with_the_context_it_serves(tmp_path):
    served = DECLARED_CONTEXT // 2
    with reference_vendor(tmp_path, "overclaimed") as vendor:
        result = probe_json(run_probe(*FAST, "--checks", "oversize", base_url=vendor.base_url))
        received = vendor.requests()

    oversize = result["checks"]["oversize"]
    assert oversize["result"] == "overclaimed"
    below = oversize["below"]
    assert (below["status"], below["measured"]) == (400, True)
    assert "exceeds the available context size (4096 tokens)" in below["error"]
    assert oversize["above"] is None
    assert oversize["limit_stated"] == served
    assert 0.95 * served <= oversize["served_context"] <= served
    assert 1 <= oversize["bisection_requests"] <= 6
    # served_context is a size the vendor itself counted and answered.
    answered = {entry["prompt_tokens"] for entry in received if entry["status"] == 200}
    assert oversize["served_context"] in answered
    assert oversize["requests"] == 1 + oversize["bisection_requests"]


def test_a_base_url_ending_in_v1_gives_the_same_results(tmp_path):
    with reference_vendor(tmp_path, "remediated") as vendor:
        bare = probe_json(run_probe(*FAST, base_url=vendor.base_url))
        with_v1 = probe_json(run_probe(*FAST, base_url=vendor.base_url + "/v1/"))
        paths = {entry.get("path") for entry in vendor.requests()}

    assert with_v1["endpoint"] == bare["endpoint"] == vendor.base_url
    outcomes = {name: check["result"] for name, check in bare["checks"].items()}
    assert {name: check["result"] for name, check in with_v1["checks"].items()} == outcomes
    assert outcomes == {"oversize": "rejected", "canary": "clean", "prefix_cache": "isolated"}
    assert paths == {"/v1/chat/completions"}


def test_a_base_url_with_nothing_behind_it_exits_3_and_books_nothing(tmp_path):
    with reference_vendor(tmp_path, "remediated") as vendor:
        completed = run_probe(base_url=vendor.base_url + "/api/openai")
        received = vendor.requests()

    assert completed.returncode == 3 and completed.stdout == ""
    assert (
        f"no chat completions endpoint at {vendor.base_url}/api/openai/v1/chat/completions "
        "(check the base URL)"
    ) in completed.stderr
    assert [entry["status"] for entry in received] == [404]


def test_a_model_the_endpoint_does_not_serve_exits_3_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_KEY_A", KEY_A)
    monkeypatch.setenv("TEST_KEY_B", KEY_B)
    with reference_vendor(tmp_path, "remediated") as vendor:
        with pytest.raises(CommandError) as refused:
            call_command(
                "probe",
                "--base-url", vendor.base_url, "--model", "glm-5.3",
                "--declared-context", str(DECLARED_CONTEXT),
                "--key-a-env", "TEST_KEY_A", "--key-b-env", "TEST_KEY_B",
                stdout=io.StringIO(),
            )  # fmt: skip
        received = vendor.requests()

    assert refused.value.returncode == 3
    assert (
        f"the endpoint at {vendor.base_url}/v1/chat/completions does not serve the model 'glm-5.3'"
    ) in str(refused.value)
    assert len(received) == 1
