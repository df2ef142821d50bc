"""The probe's safety rails, in-process against the reference vendor as a real process: the
budget is checked before every request (asserted from the vendor's own request log), the time
limit, the rate cap, no redirects, and keys kept out of logs, results and messages."""

from __future__ import annotations

import json
import logging
import pickle
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.outbound import OutboundPolicy, parse_networks
from probes.endpoint import ApiKey, ProbeInputError, endpoint_validate
from probes.runner import ProbeUnreachable, probe_config_build, probe_run

from .vendor import DECLARED_CONTEXT, MODEL, reference_vendor

KEY_A = f"sk-tenant-a-{secrets.token_hex(16)}"
KEY_B = f"sk-tenant-b-{secrets.token_hex(16)}"


LOOPBACK_ALLOWED = OutboundPolicy(parse_networks(["127.0.0.0/8", "::1/128"]))


def config(base_url: str, **options):
    options = {
        "samples": 10,
        "prefix_tokens": 1024,
        "rate_per_key": 50,
        "key_a": ApiKey(KEY_A),
        "key_b": ApiKey(KEY_B),
        **options,
    }
    return probe_config_build(
        base_url=base_url,
        model=MODEL,
        declared_context=DECLARED_CONTEXT,
        allow_http=False,
        outbound=LOOPBACK_ALLOWED,
        **options,
    )


def test_a_check_the_budget_cannot_cover_is_inconclusive_and_never_sent(tmp_path):
    with reference_vendor(tmp_path, "launch-day") as vendor:
        # Enough for calibration and the oversize check (about 18,000 tokens), not for a
        # canary pair (half plus 90 % of 8,192 tokens).
        result = probe_run(
            config(vendor.base_url, checks=("oversize", "canary"), budget_tokens=25_000)
        )
        received = vendor.requests()

    canary = result.checks["canary"]
    assert result.checks["oversize"].result == "accepted"
    assert canary.result == "inconclusive" and canary.reason.startswith("not sent")
    assert (canary.requests, canary.tokens_spent, canary.canaries_sent) == (0, 0, 0)
    # The vendor saw the two calibration requests and the two oversize prompts, nothing else.
    assert len(received) == 4 == result.requests_sent
    assert result.tokens_spent == sum(entry["prompt_tokens"] for entry in received)
    assert result.tokens_spent <= 25_000


def test_the_canary_check_sends_as_many_pairs_as_the_budget_allows(tmp_path):
    with reference_vendor(tmp_path, "remediated") as vendor:
        result = probe_run(config(vendor.base_url, checks=("canary",), budget_tokens=16_000))
        received = vendor.requests()

    canary = result.checks["canary"]
    assert canary.result == "clean" and canary.pairs == 1
    assert "1 of 3 pairs" in canary.reason
    assert len(received) == 2 + 1 + 2  # calibration, canary calibration, one pair
    assert result.tokens_spent <= 16_000


def test_a_prefix_cache_check_the_budget_cannot_cover_sends_nothing(tmp_path):
    with reference_vendor(tmp_path, "shared-cache-only") as vendor:
        result = probe_run(config(vendor.base_url, checks=("prefix_cache",), budget_tokens=20_000))
        received = vendor.requests()

    cache = result.checks["prefix_cache"]
    assert cache.result == "inconclusive" and cache.reason.startswith("not sent")
    assert cache.requests == 0 and len(received) == 2  # calibration only


def test_the_time_limit_stops_the_probe(tmp_path):
    with reference_vendor(tmp_path, "shared-cache-only") as vendor:
        started = time.monotonic()
        result = probe_run(
            config(
                vendor.base_url,
                checks=("prefix_cache",),
                samples=25,
                rate_per_key=2,
                timeout_s=2,
            )
        )
        elapsed = time.monotonic() - started

    cache = result.checks["prefix_cache"]
    assert cache.result == "inconclusive" and "time limit" in cache.reason
    assert elapsed < 4


def test_requests_of_one_key_keep_to_the_rate_cap(tmp_path):
    with reference_vendor(tmp_path, "remediated", "--prefill-ms-per-1k-tokens", "0") as vendor:
        probe_run(config(vendor.base_url, checks=("oversize",), rate_per_key=3))
        received = vendor.requests()

    by_tenant: dict[str, list[float]] = {}
    for entry in received:
        by_tenant.setdefault(entry["tenant"], []).append(entry["time"])
    tenant_a = max(by_tenant.values(), key=len)
    assert len(tenant_a) == 3  # calibration, ~90 %, ~110 %
    gaps = [later - earlier for earlier, later in zip(tenant_a, tenant_a[1:], strict=False)]
    assert min(gaps) >= 0.9 / 3


class _Redirecting(BaseHTTPRequestHandler):
    target = ""

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(307)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_redirects_are_never_followed(tmp_path):
    with reference_vendor(tmp_path, "launch-day") as vendor:
        handler = type("Handler", (_Redirecting,), {"target": vendor.base_url})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            result = probe_run(
                config(f"http://127.0.0.1:{server.server_address[1]}", checks=("oversize",))
            )
        finally:
            server.shutdown()
            server.server_close()
        received = vendor.requests()

    assert result.checks["oversize"].result == "inconclusive"
    assert "HTTP 307 (redirect not followed)" in result.checks["oversize"].reason
    assert received == []  # the keys never reached the address the redirect named


def test_keys_stay_out_of_logs_results_and_messages(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "probes"):
        caplog.set_level(logging.DEBUG, logger=name)
    # The vendor knows only tenant A's key and repeats refused keys in its messages.
    with reference_vendor(
        tmp_path,
        "launch-day",
        "--keys-env",
        "VENDOR_KEYS",
        "--echo-refused-keys",
        env={"VENDOR_KEYS": KEY_A},
    ) as vendor:
        probe_config = config(vendor.base_url, checks=("oversize", "canary"))
        result = probe_run(probe_config)
        with pytest.raises(ProbeUnreachable) as unreachable:
            probe_run(config(vendor.base_url, key_a=ApiKey(f"sk-other-{KEY_B}")))

    assert result.checks["oversize"].result == "accepted"  # tenant A alone can do it
    assert result.checks["canary"].result == "inconclusive"
    assert "refused the key of tenant B" in result.checks["canary"].reason
    assert caplog.records  # the probe, httpx and httpcore did log
    seen = "\n".join(
        [
            caplog.text,
            json.dumps(result.to_dict()),
            repr(probe_config),
            str(probe_config),
            str(unreachable.value),
        ]
    )
    assert KEY_A not in seen and KEY_B not in seen
    assert "[redacted key]" in str(unreachable.value)


def test_an_api_key_hides_itself():
    key = ApiKey(KEY_A)
    assert KEY_A not in repr(key) and KEY_A not in str(key) and KEY_A not in f"{key}"
    with pytest.raises(TypeError):
        pickle.dumps(key)
    assert key.reveal() == KEY_A


@pytest.mark.parametrize(
    ("url", "allow_http", "accepted"),
    [
        ("https://api.vendor.example", False, True),
        ("https://api.vendor.example/openai/", False, True),
        ("http://127.0.0.1:8401", False, True),
        ("http://127.8.9.10:8401", False, True),
        ("http://[::1]:8401", False, True),
        ("http://localhost:8401", False, True),
        ("http://api.vendor.example", False, False),
        ("http://192.168.1.20:8000", False, False),
        ("http://api.vendor.example", True, True),
        ("ftp://api.vendor.example", True, False),
        ("https://user:secret@api.vendor.example", False, False),
        ("https://api.vendor.example/?key=1", False, False),
        ("https://api.vendor.example#x", False, False),
        ("https://", False, False),
        ("api.vendor.example", False, False),
        ("https://api.vendor.example:99999", False, False),
        ("https://api vendor.example", False, False),
        ("", False, False),
    ],
)
def test_only_https_outside_the_allowed_networks_unless_the_operator_allows_it(
    url, allow_http, accepted
):
    """Plain http:// only to the networks the operator lists (here loopback, as in the tests and
    the demo), or everywhere with PROBE_ALLOW_HTTP."""
    if accepted:
        assert endpoint_validate(url, allow_http=allow_http, policy=LOOPBACK_ALLOWED) == url.rstrip(
            "/"
        )
    else:
        with pytest.raises(ProbeInputError) as refused:
            endpoint_validate(url, allow_http=allow_http, policy=LOOPBACK_ALLOWED)
        assert list(refused.value.errors) == ["base_url"]


def test_refused_requests_cost_nothing_and_every_token_is_counted(tmp_path):
    # The vendor knows tenant A's key only: B's requests are refused (401) and cost nothing.
    with reference_vendor(
        tmp_path, "remediated", "--keys-env", "VENDOR_KEYS", env={"VENDOR_KEYS": KEY_A}
    ) as vendor:
        result = probe_run(config(vendor.base_url, checks=("oversize", "prefix_cache")))
        received = vendor.requests()

    refused = [entry for entry in received if entry["status"] == 401]
    assert len(refused) == 1  # B's calibration; the prefix-cache check then needs both
    assert result.checks["prefix_cache"].result == "inconclusive"
    assert result.tokens_measured is True
    # Exactly what the vendor counted for the prompts it processed (the 400 included: its
    # refusal states the count), nothing for the refused one.
    assert result.tokens_spent == sum(entry.get("prompt_tokens", 0) for entry in received)
    assert result.requests_sent == len(received)


@pytest.mark.parametrize("template_tokens", [0, 600])
def test_prompts_land_within_3_percent_of_their_targets(tmp_path, template_tokens):
    """Two calibration prompts separate a chat template's fixed tokens from the per-word cost:
    even with 600 tokens of framing on every prompt the sizes hit their targets."""
    with reference_vendor(
        tmp_path, "launch-day", "--template-tokens", str(template_tokens)
    ) as vendor:
        result = probe_run(
            config(vendor.base_url, checks=("oversize", "prefix_cache"), prefix_tokens=2048)
        )
        received = vendor.requests()

    oversize = result.checks["oversize"]
    assert oversize.below is not None and oversize.above is not None
    assert oversize.below.measured and oversize.above.measured
    for outcome, share in ((oversize.below, 0.9), (oversize.above, 1.1)):
        assert outcome.target_tokens == round(share * DECLARED_CONTEXT)
        assert abs(outcome.prompt_tokens - outcome.target_tokens) <= 0.03 * outcome.target_tokens
        assert outcome.percent_of_declared == pytest.approx(
            100 * outcome.prompt_tokens / DECLARED_CONTEXT, abs=0.05
        )
    streamed = [entry["prompt_tokens"] for entry in received if entry["stream"]]
    assert streamed and all(abs(size - 2048) <= 0.03 * 2048 for size in streamed)
    assert abs(result.checks["prefix_cache"].prefix_tokens - 2048) <= 0.03 * 2048
    assert result.template_tokens is not None
    assert abs(result.template_tokens - template_tokens) <= 20


def test_the_served_model_is_recorded_beside_the_requested_one(tmp_path):
    with reference_vendor(tmp_path, "remediated", "--served-model", "glm-5.3-int4") as vendor:
        result = probe_run(config(vendor.base_url, checks=("oversize",)))

    assert (result.model, result.served_model) == (MODEL, "glm-5.3-int4")
    assert result.to_dict()["served_model"] == "glm-5.3-int4"


class _Silent(BaseHTTPRequestHandler):
    """Answers the calibration, then never answers again."""

    answered = 0

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        if type(self).answered >= 2:
            time.sleep(5)
            return
        type(self).answered += 1
        body = json.dumps(
            {
                "model": MODEL,
                "choices": [{"message": {"content": "ok"}}],
                "usage": {"prompt_tokens": 150 if type(self).answered == 1 else 550},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_timeout_names_the_url_and_its_tokens_are_an_estimate():
    handler = type("Handler", (_Silent,), {"answered": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        result = probe_run(config(base_url + "/v1", checks=("oversize",), timeout_s=2))
    finally:
        server.shutdown()
        server.server_close()

    oversize = result.checks["oversize"]
    assert oversize.result == "inconclusive"
    assert f"timed out waiting for {base_url}/v1/chat/completions" in oversize.reason
    assert result.endpoint == base_url
    assert result.tokens_measured is False  # the unanswered prompt counts at its estimate
