"""The probe's only way out: an OpenAI-compatible chat client (`POST {base}/v1/chat/completions`)
that checks the token budget, the time limit and the per-key rate cap BEFORE every request.

Built on httpx (streaming, timeouts; redirects never followed; no proxy or .netrc from the
environment, so a key goes to the named endpoint and nowhere else). Errors come back as a
`Reply` with a short description that never contains a key.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from core.outbound import OutboundPolicy, outbound_client

from .endpoint import ApiKey

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0
# A non-streamed answer larger than this is not a chat completion; stop reading.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
USER_AGENT = "AVIA isolation probe (authorised test; see the vendor's written authorisation)"
# Statuses that say nothing about the prompt itself (auth, routing, rate limiting).
NOT_ABOUT_THE_PROMPT = frozenset({401, 403, 404, 405, 408, 429})


class BudgetExceeded(Exception):
    """The next request could overspend the token budget; it was not sent."""


class TimeLimitReached(Exception):
    """The probe's overall time limit is over; the next request was not sent."""


@dataclass(frozen=True)
class Reply:
    """What one request got back. `status` is None when no HTTP answer came (refused
    connection, DNS, TLS, timeout)."""

    status: int | None
    text: str = ""
    prompt_tokens: int | None = None  # usage.prompt_tokens, as the endpoint reported it
    ttft_ms: float | None = None  # streamed requests: time to the first generated text
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def key_refused(self) -> bool:
        return self.status in (401, 403)

    @property
    def rejected_prompt(self) -> bool:
        """A 4xx about the request itself (too long, invalid), not about auth or rate."""
        return (
            self.status is not None
            and 400 <= self.status < 500
            and self.status not in NOT_ABOUT_THE_PROMPT
        )

    def describe(self) -> str:
        if self.status is None:
            return self.error or "no answer"
        return f"HTTP {self.status}" + (f" ({self.error})" if self.error else "")


class Budget:
    """Prompt tokens the probe may spend. `require` is asked before each request with the
    calibrated estimate; `charge` records what was spent (the reported usage, else the
    estimate: a rejected prompt may or may not be billed, so it counts)."""

    def __init__(self, limit_tokens: int) -> None:
        self.limit_tokens = limit_tokens
        self.spent = 0

    @property
    def remaining(self) -> int:
        return max(0, self.limit_tokens - self.spent)

    def require(self, estimate: int) -> None:
        if self.spent + estimate > self.limit_tokens:
            raise BudgetExceeded(
                f"the next request (about {estimate:,} prompt tokens) would exceed the budget "
                f"({self.spent:,} of {self.limit_tokens:,} spent)"
            )

    def charge(self, tokens: int) -> None:
        self.spent += max(0, tokens)


class RateLimiter:
    """At most `per_second` request starts per key, spaced evenly (a request waits its turn).

    Ten lines with a monotonic clock; a limiter library would add a dependency for no gain in a
    single-threaded probe."""

    def __init__(self, per_second: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = 1.0 / per_second
        self._clock = clock
        self._next_start: dict[str, float] = {}

    def wait_time(self, key_label: str) -> float:
        return max(0.0, self._next_start.get(key_label, 0.0) - self._clock())

    def started(self, key_label: str) -> None:
        self._next_start[key_label] = self._clock() + self.interval


@dataclass
class Ledger:
    """Requests sent and tokens spent, overall and per check (for the report)."""

    requests_sent: int = 0
    tokens_spent: int = 0
    by_check: dict[str, dict[str, int]] = field(default_factory=dict)
    current: str = "calibration"

    def record(self, tokens: int) -> None:
        self.requests_sent += 1
        self.tokens_spent += tokens
        entry = self.by_check.setdefault(self.current, {"requests": 0, "tokens_spent": 0})
        entry["requests"] += 1
        entry["tokens_spent"] += tokens

    def of(self, check: str) -> dict[str, int]:
        return dict(self.by_check.get(check, {"requests": 0, "tokens_spent": 0}))


class ChatClient:
    """One probe's connection to one endpoint and model."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        budget: Budget,
        rate_per_key: float,
        deadline: float,
        keys: Sequence[ApiKey] = (),
        before_send: Callable[[], None] | None = None,
        outbound: OutboundPolicy | None = None,
    ) -> None:
        self.url = f"{base_url}/v1/chat/completions"
        self.model = model
        self.budget = budget
        self.deadline = deadline  # time.monotonic() value
        self.ledger = Ledger()
        self._rate = RateLimiter(rate_per_key)
        self._before_send = before_send
        # An endpoint may echo a key in an error message or a response ("Incorrect API key
        # provided: ..."); nothing the endpoint says reaches a result or a log unredacted.
        self._keys = tuple(keys)
        # Only to addresses the outbound-address policy allows, checked on connecting.
        self._http = outbound_client(
            outbound or OutboundPolicy(), headers={"User-Agent": USER_AGENT}
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def accounting(self, check: str) -> Iterator[None]:
        previous, self.ledger.current = self.ledger.current, check
        try:
            yield
        finally:
            self.ledger.current = previous

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()

    def complete(
        self,
        *,
        key: ApiKey,
        tenant: str,
        prompt: str,
        estimate_tokens: int,
        max_tokens: int,
        stream: bool = False,
    ) -> Reply:
        """Send one chat completion as `tenant` ("A" or "B") and return what came back.

        Raises BudgetExceeded or TimeLimitReached, without sending, when the request could
        overspend the budget or would start after the time limit.
        """
        self.budget.require(estimate_tokens)
        wait = self._rate.wait_time(tenant)
        if wait >= self.seconds_left():
            raise TimeLimitReached("the probe's time limit is reached")
        if wait:
            time.sleep(wait)
        left = self.seconds_left()
        if left <= 0:
            raise TimeLimitReached("the probe's time limit is reached")
        if self._before_send is not None:
            self._before_send()
        self._rate.started(tenant)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        timeout = httpx.Timeout(left, connect=min(CONNECT_TIMEOUT_S, left))
        headers = {"Authorization": f"Bearer {key.reveal()}"}
        reply = redact(self._send(body, headers, timeout, stream=stream), self._keys)
        spent = reply.prompt_tokens if reply.prompt_tokens is not None else estimate_tokens
        self.budget.charge(spent)
        self.ledger.record(spent)
        logger.debug(
            "probe request: check %s, tenant %s, about %s prompt tokens: %s",
            self.ledger.current,
            tenant,
            estimate_tokens,
            reply.describe(),
        )
        return reply

    def _send(
        self, body: dict[str, Any], headers: dict[str, str], timeout: httpx.Timeout, *, stream: bool
    ) -> Reply:
        started = time.perf_counter()
        try:
            with self._http.stream(
                "POST", self.url, json=body, headers=headers, timeout=timeout
            ) as response:
                status = response.status_code
                if 300 <= status < 400:
                    return Reply(status, error="redirect not followed")
                if status != 200 or not stream:
                    return _parse_body(status, _read_capped(response))
                return _parse_stream(response, started)
        except httpx.TimeoutException:
            return Reply(None, error="timed out")
        except httpx.ConnectError:
            return Reply(None, error=f"cannot connect to {self.url}")
        except httpx.HTTPError as exc:
            # httpx's messages name the URL and the failure, never the request's headers.
            return Reply(None, error=f"{type(exc).__name__}: {exc}")


REDACTED = "[redacted key]"


def redact(reply: Reply, keys: Sequence[ApiKey]) -> Reply:
    text, error = reply.text, reply.error
    for key in keys:
        secret = key.reveal()
        text = text.replace(secret, REDACTED)
        error = error.replace(secret, REDACTED) if error else error
    return replace(reply, text=text, error=error)


def _read_capped(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_body(status: int, raw: bytes) -> Reply:
    try:
        document = json.loads(raw)
    except ValueError:
        return Reply(status, error=None if status >= 400 else "the answer is not JSON")
    if not isinstance(document, dict):
        return Reply(status, error="the answer is not a JSON object")
    if status >= 400:
        error = document.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        return Reply(status, error=str(message)[:200] if message else None)
    text = ""
    choices = document.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        text = content if isinstance(content, str) else ""
    return Reply(status, text=text, prompt_tokens=_prompt_tokens(document))


def _parse_stream(response: httpx.Response, started: float) -> Reply:
    """Server-sent events: `data: {chunk}` lines until `data: [DONE]`. The first chunk that
    carries generated text marks the time to first token."""
    pieces: list[str] = []
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    size = 0
    for line in response.iter_lines():
        size += len(line)
        if size > MAX_RESPONSE_BYTES:
            break
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            continue
        if not isinstance(chunk, dict):
            continue
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str) and content:
                if ttft_ms is None:
                    ttft_ms = (time.perf_counter() - started) * 1000
                pieces.append(content)
        prompt_tokens = _prompt_tokens(chunk) or prompt_tokens
    return Reply(
        response.status_code, text="".join(pieces), prompt_tokens=prompt_tokens, ttft_ms=ttft_ms
    )


def _prompt_tokens(document: dict[str, Any]) -> int | None:
    usage = document.get("usage")
    value = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
