"""The probe's only way out: an OpenAI-compatible chat client (`POST {base}/v1/chat/completions`)
that checks the token budget, the time limit and the per-key rate cap BEFORE every request.

Built on httpx (streaming, timeouts; redirects never followed; no proxy or .netrc from the
environment, so a key goes to the named endpoint and nowhere else; `http_client_build`).
Every text field of an answer is read (content, reasoning_content, reasoning). Errors come
back as a `Reply` with a short description that names the URL and never contains a key.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from core.outbound import OutboundPolicy, outbound_client

from .endpoint import ApiKey, chat_completions_url

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


# The fields of a chat answer that carry generated text: reasoning models' templates put it in
# reasoning_content (llama.cpp, DeepSeek) or reasoning (some gateways) and leave content "".
TEXT_FIELDS = ("content", "reasoning_content", "reasoning")
# Refusals that never reach the model: they cost nothing, unless the endpoint reports usage.
REFUSED_FREE = frozenset({401, 403, 404, 429})


@dataclass(frozen=True)
class Reply:
    """What one request got back. `status` is None when no HTTP answer came (refused
    connection, DNS, TLS, timeout); `connected` is False when the request never left."""

    status: int | None
    texts: Mapping[str, str] = field(default_factory=dict)  # TEXT_FIELDS name -> text
    prompt_tokens: int | None = None  # usage.prompt_tokens, as the endpoint reported it
    ttft_ms: float | None = None  # streamed: time to the first delta with text or usage
    error: str | None = None
    model: str | None = None  # the model the endpoint named in its answer
    stated_prompt_tokens: int | None = None  # the prompt's size as a refusal states it
    limit_stated: int | None = None  # the context limit a refusal states
    error_code: str | None = None
    connected: bool = True

    @property
    def text(self) -> str:
        """Every text field of the answer, in TEXT_FIELDS order."""
        return "\n".join(self.texts[name] for name in TEXT_FIELDS if self.texts.get(name))

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def key_refused(self) -> bool:
        return self.status in (401, 403)

    @property
    def counted_tokens(self) -> int | None:
        """The prompt's size as the endpoint counted it: its usage, else its refusal's words."""
        return self.prompt_tokens if self.prompt_tokens is not None else self.stated_prompt_tokens

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
    calibrated estimate; `charge` records what was spent (see `tokens_charged`)."""

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
    estimated_requests: int = 0  # requests charged at the probe's estimate, not a count
    by_check: dict[str, dict[str, int]] = field(default_factory=dict)
    current: str = "calibration"

    def record(self, tokens: int, *, measured: bool = True) -> None:
        self.requests_sent += 1
        self.tokens_spent += tokens
        self.estimated_requests += not measured
        entry = self.by_check.setdefault(self.current, {"requests": 0, "tokens_spent": 0})
        entry["requests"] += 1
        entry["tokens_spent"] += tokens

    def of(self, check: str) -> dict[str, int]:
        return dict(self.by_check.get(check, {"requests": 0, "tokens_spent": 0}))


def tokens_charged(reply: Reply, estimate: int) -> tuple[int, bool]:
    """What a request cost, and whether that is the endpoint's own count: usage.prompt_tokens;
    nothing for a refusal that never reached the model (401, 403, 404, 429 without usage) or a
    request that never left; the count a refusal states; else the estimate (not measured: a
    prompt that timed out may or may not be billed, so it counts)."""
    if reply.prompt_tokens is not None:
        return reply.prompt_tokens, True
    if not reply.connected or reply.status in REFUSED_FREE:
        return 0, True
    if reply.stated_prompt_tokens is not None:
        return reply.stated_prompt_tokens, True
    return estimate, False


def http_client_build(outbound: OutboundPolicy) -> httpx.Client:
    """The probe's one HTTP client: redirects never followed, no proxy or .netrc from the
    environment, so a key goes to the named endpoint and nowhere else, and only to addresses
    the outbound-address policy allows, checked on connecting (core.outbound)."""
    return outbound_client(outbound, headers={"User-Agent": USER_AGENT})


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
        self.url = chat_completions_url(base_url)
        self.model = model
        self.served_model: str | None = None  # the first model name the endpoint answered with
        self.budget = budget
        self.deadline = deadline  # time.monotonic() value
        self.ledger = Ledger()
        self._rate = RateLimiter(rate_per_key)
        self._before_send = before_send
        # An endpoint may echo a key in an error message or a response ("Incorrect API key
        # provided: ..."); nothing the endpoint says reaches a result or a log unredacted.
        self._keys = tuple(keys)
        self._http = http_client_build(outbound or OutboundPolicy())

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
        spent, measured = tokens_charged(reply, estimate_tokens)
        self.budget.charge(spent)
        self.ledger.record(spent, measured=measured)
        if reply.ok and reply.model and self.served_model is None:
            self.served_model = reply.model
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
                    return reply_from_body(status, _read_capped(response))
                return _parse_stream(response, started)
        except httpx.ConnectTimeout:
            return Reply(None, error=f"timed out connecting to {self.url}", connected=False)
        except httpx.TimeoutException:
            return Reply(None, error=f"timed out waiting for {self.url}")
        except httpx.ConnectError as exc:
            return Reply(None, error=f"cannot connect to {self.url} ({exc})", connected=False)
        except httpx.HTTPError as exc:
            # httpx's messages name the failure, never the request's headers.
            return Reply(None, error=f"{type(exc).__name__} from {self.url}: {exc}")


REDACTED = "[redacted key]"


def redact(reply: Reply, keys: Sequence[ApiKey]) -> Reply:
    texts, error = dict(reply.texts), reply.error
    for key in keys:
        secret = key.reveal()
        texts = {name: text.replace(secret, REDACTED) for name, text in texts.items()}
        error = error.replace(secret, REDACTED) if error else error
    return replace(reply, texts=texts, error=error)


def _read_capped(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def reply_from_body(status: int, raw: bytes) -> Reply:
    try:
        document = json.loads(raw)
    except ValueError:
        return Reply(status, error=None if status >= 400 else "the answer is not JSON")
    if not isinstance(document, dict):
        return Reply(status, error="the answer is not a JSON object")
    if status >= 400:
        return refusal_read(status, document)
    texts: dict[str, str] = {}
    choices = document.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        _add_texts(texts, choices[0].get("message"))
    return Reply(
        status,
        texts=texts,
        prompt_tokens=_prompt_tokens(document),
        model=_model(document),
    )


def _parse_stream(response: httpx.Response, started: float) -> Reply:
    """Server-sent events: `data: {chunk}` lines until `data: [DONE]`. The first chunk that
    carries text in any field, or the usage, marks the time to first token; a stream with
    neither is timed to its end (an answer without text is still an answer)."""
    texts: dict[str, str] = {}
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    model: str | None = None
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
        model = model or _model(chunk)
        carried = False
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict):
                carried |= _add_texts(texts, choice.get("delta"))
        usage = _prompt_tokens(chunk)
        if usage is not None:
            prompt_tokens, carried = usage, True
        if carried and ttft_ms is None:
            ttft_ms = (time.perf_counter() - started) * 1000
    if ttft_ms is None:
        ttft_ms = (time.perf_counter() - started) * 1000
    return Reply(
        response.status_code,
        texts=texts,
        prompt_tokens=prompt_tokens,
        ttft_ms=ttft_ms,
        model=model,
    )


def _add_texts(texts: dict[str, str], message: object) -> bool:
    """Append the text of every TEXT_FIELDS field of a message or delta (a string, or a list
    of text parts) to `texts`; whether any text came."""
    if not isinstance(message, dict):
        return False
    carried = False
    for name in TEXT_FIELDS:
        value = message.get(name)
        if isinstance(value, list):
            value = "".join(
                part.get("text") or ""
                for part in value
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if isinstance(value, str) and value:
            texts[name] = texts.get(name, "") + value
            carried = True
    return carried


# What refusals say about the prompt's size and the limit, in the engines' own words:
# llama.cpp "request (8000 tokens) exceeds the available context size (4096 tokens)" (or, with
# context shift, "input (8000 tokens) is larger than the max context size (4096 tokens)");
# vLLM and OpenAI "This model's maximum context length is 4096 tokens. However, you requested
# 8001 tokens (8000 in the messages, 1 in the completion)" or "... your messages resulted in
# 8000 tokens" or "... your request has 8000 input tokens"; TGI "... must be <= 4096. Given:
# 8000 `inputs` tokens".
_STATED_PROMPT = (
    re.compile(r"request \((\d+) tokens?\)"),
    re.compile(r"input \((\d+) tokens?\)"),
    re.compile(r"(\d+) in the messages"),
    re.compile(r"messages resulted in (\d+) tokens"),
    re.compile(r"messages have (\d+)"),
    re.compile(r"(\d+) input tokens"),
    re.compile(r"Given: (\d+) `inputs` tokens"),
)
_STATED_LIMIT = (
    re.compile(r"available context size \((\d+) tokens?\)"),
    re.compile(r"max context size \((\d+) tokens?\)"),
    re.compile(r"maximum context length is (\d+)"),
    re.compile(r"must be <= (\d+)"),
)
ERROR_MESSAGE_CHARS = 200


def refusal_read(status: int, document: dict[str, Any]) -> Reply:
    """An error answer: its message, and the sizes it states (error fields first, as
    llama.cpp gives `n_prompt_tokens` and `n_ctx`, then the message's words)."""
    error = document.get("error")
    fields: dict[str, Any] = error if isinstance(error, dict) else document
    message = fields.get("message")
    if message is None and isinstance(error, str):
        message = error
    message = str(message if message is not None else fields.get("detail") or "")
    code = fields.get("code") if isinstance(fields.get("code"), str) else fields.get("type")
    return Reply(
        status,
        error=message[:ERROR_MESSAGE_CHARS] or None,
        stated_prompt_tokens=_count_field(fields, "n_prompt_tokens")
        or _first_number(_STATED_PROMPT, message),
        limit_stated=_count_field(fields, "n_ctx") or _first_number(_STATED_LIMIT, message),
        error_code=str(code) if isinstance(code, str) else None,
    )


def _first_number(patterns: Sequence[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        found = pattern.search(text)
        if found:
            return int(found.group(1))
    return None


def _count_field(fields: dict[str, Any], name: str) -> int | None:
    value = fields.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _model(document: dict[str, Any]) -> str | None:
    value = document.get("model")
    return value[:200] if isinstance(value, str) and value.strip() else None


def _prompt_tokens(document: dict[str, Any]) -> int | None:
    usage = document.get("usage")
    value = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
