"""AVIA's reference vendor: an OpenAI-compatible fake inference server for the probe's tests and
the demo. A real process on a loopback port:

    python -m probes.reference_vendor --mode launch-day --port 8401
    python manage.py reference_vendor --mode remediated --port 8402

`POST /v1/chat/completions` (streamed or not, with `usage.prompt_tokens`) and `GET /v1/models`.
Every bearer key is its own tenant. What it does wrong is set by flags, grouped in presets:

- launch-day: accepts prompts over the declared context (HTTP 200, the incident), has a KV pool
  smaller than the context (about 65 %, like the incident's 681,280 of 1,048,576 tokens) and,
  when a prompt is longer than the pool, answers with another tenant's recent prompt text;
  its prefix cache is shared across keys.
- remediated: rejects oversized prompts with a 400, a pool of twice the context (the
  remediation), nothing leaks, one prefix cache per tenant.
- shared-cache-only: like remediated, but with one prefix cache shared by every key, kept
  like a real engine with one slot (llama.cpp's `--parallel 1 --cache-ram 0`): only the last
  prompt's KV is kept, so any other prompt sent between a warm-up and its hit evicts it.
- reasoning: launch-day, answering as a reasoning model's chat template does: the text in
  `reasoning_content`, `content` empty; a leak travels in `reasoning_content`.
- overclaimed: like remediated, but it declares twice the context it serves and refuses a
  longer prompt as llama.cpp does ("request (N tokens) exceeds the available context size
  (C tokens)", with `n_prompt_tokens` and `n_ctx` in the error).

Prefill takes a fixed time per token not found in the prefix cache, so cached prefixes answer
measurably faster. Tokens are counted by a simple rule (runs of up to four word characters,
and each other non-space character), which is all `usage.prompt_tokens` needs to be consistent.

Standard library only (http.server): the server is a test instrument, not a product; it must
start in a fraction of a second and run anywhere the tests do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import secrets
import signal
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOKEN_PATTERN = re.compile(r"\w{1,4}|[^\w\s]")
# As in OpenAI's counting: a few tokens of framing per message and per request.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REQUEST = 3
CACHE_BLOCK_TOKENS = 16  # vLLM's default KV block size
CACHE_MAX_BLOCKS = 500_000
RECENT_PROMPTS = 32
MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_TOKENS = 16

_LAUNCH_DAY: dict[str, Any] = {
    "reject_oversize": False,
    "kv_pool_share": 0.65,
    "leak_over_pool": True,
    "prefix_cache": "shared",
    "cache_prompts": 0,
    "answer_field": "content",
    "served_share": 1.0,
}
_REMEDIATED: dict[str, Any] = {
    **_LAUNCH_DAY,
    "reject_oversize": True,
    "kv_pool_share": 2.0,
    "leak_over_pool": False,
    "prefix_cache": "per-tenant",
}
MODES: dict[str, dict[str, Any]] = {
    "launch-day": _LAUNCH_DAY,
    "remediated": _REMEDIATED,
    "shared-cache-only": {**_REMEDIATED, "prefix_cache": "shared", "cache_prompts": 1},
    "reasoning": {**_LAUNCH_DAY, "answer_field": "reasoning_content"},
    "overclaimed": {**_REMEDIATED, "served_share": 0.5},
}
CACHE_SCOPES = ("shared", "per-tenant", "off")
ANSWER_FIELDS = ("content", "reasoning_content", "reasoning")


@dataclass(frozen=True)
class VendorSettings:
    model: str
    declared_context: int
    kv_pool_tokens: int
    reject_oversize: bool
    leak_over_pool: bool
    prefix_cache: str  # shared | per-tenant | off
    prefill_ms_per_1k_tokens: float
    accepted_keys: frozenset[str] | None  # None: every key is a tenant
    # Some gateways repeat the refused key in the error message; the probe must not pass it on.
    echo_refused_keys: bool = False
    # The context it really serves; below the declared one, it refuses as llama.cpp does.
    served_context: int = 0
    # 0: a block cache as large as it gets (vLLM, SGLang); n: only the last n prompts per
    # cache scope keep their KV, as an engine with n slots and no RAM cache does.
    cache_prompts: int = 0
    answer_field: str = (
        "content"  # where the answer's text goes (reasoning models: reasoning_content)
    )
    served_model: str = ""  # the model its answers name (default: the requested one)
    template_tokens: int = 0  # a chat template's fixed framing, added to every prompt

    @property
    def context_served(self) -> int:
        return self.served_context or self.declared_context


def count_tokens(text: str) -> int:
    return len(TOKEN_PATTERN.findall(text))


def _text_of(messages: object) -> list[str]:
    """The text of each message (a string, or OpenAI's list of content parts)."""
    texts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.append(
                "".join(
                    part.get("text", "")
                    for part in content
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                )
            )
    return texts


def _first_tokens(text: str, tokens: int) -> str:
    """The beginning of `text` that holds `tokens` tokens."""
    end = 0
    for count, match in enumerate(TOKEN_PATTERN.finditer(text), start=1):
        end = match.end()
        if count >= tokens:
            break
    return text[:end]


class VendorState:
    """What the engine remembers between requests: recent prompts (the pages the incident's
    attention read back) and the prefix cache."""

    def __init__(self, settings: VendorSettings, request_log: Path | None) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._recent: deque[tuple[str, str]] = deque(maxlen=RECENT_PROMPTS)
        self._cache: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._slots: dict[str, deque[list[str]]] = {}  # scope -> the last prompts' blocks
        self._log_path = request_log
        self._random = random.Random(secrets.randbits(64))

    def cached_tokens(self, tenant: str, text: str) -> int:
        """Tokens at the start of `text` already in the cache this tenant can reach; the whole
        prompt's blocks are cached afterwards."""
        if self.settings.prefix_cache == "off":
            return 0
        scope = "*" if self.settings.prefix_cache == "shared" else tenant
        tokens = TOKEN_PATTERN.findall(text)
        if self.settings.cache_prompts:
            return self._cached_in_slots(scope, tokens)
        chain = hashlib.sha256()
        cached, still_cached = 0, True
        with self._lock:
            for start in range(
                0, len(tokens) - len(tokens) % CACHE_BLOCK_TOKENS, CACHE_BLOCK_TOKENS
            ):
                chain.update("\x1f".join(tokens[start : start + CACHE_BLOCK_TOKENS]).encode())
                entry = (scope, chain.hexdigest())
                if still_cached and entry in self._cache:
                    cached += CACHE_BLOCK_TOKENS
                    self._cache.move_to_end(entry)
                else:
                    still_cached = False
                    self._cache[entry] = None
            while len(self._cache) > CACHE_MAX_BLOCKS:
                self._cache.popitem(last=False)
        return cached

    def _cached_in_slots(self, scope: str, tokens: list[str]) -> int:
        """An engine with `cache_prompts` slots: the longest prefix (whole blocks) shared with
        one of the last prompts of the scope; this prompt then takes the oldest slot."""
        blocks = [
            "\x1f".join(tokens[start : start + CACHE_BLOCK_TOKENS])
            for start in range(
                0, len(tokens) - len(tokens) % CACHE_BLOCK_TOKENS, CACHE_BLOCK_TOKENS
            )
        ]
        with self._lock:
            slots = self._slots.setdefault(scope, deque(maxlen=self.settings.cache_prompts))
            best = 0
            for kept in slots:
                shared = 0
                for mine, theirs in zip(blocks, kept, strict=False):
                    if mine != theirs:
                        break
                    shared += 1
                best = max(best, shared)
            slots.append(blocks)
        return best * CACHE_BLOCK_TOKENS

    def leaked_text(self, tenant: str, tokens: int) -> tuple[str, str] | None:
        """A piece of another tenant's recent prompt, as the incident's engine returned it:
        (owner, text), or None when no other tenant has sent anything yet."""
        with self._lock:
            others = [(owner, text) for owner, text in reversed(self._recent) if owner != tenant]
            if not others:
                return None
            owner, text = others[0]
            start = self._random.randrange(0, max(1, len(text) // 2))
        return owner, _first_tokens(text[start:], tokens)

    def remember(self, tenant: str, text: str) -> None:
        with self._lock:
            self._recent.append((tenant, text))

    def log(self, entry: dict[str, Any]) -> None:
        if self._log_path is None:
            return
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self._lock, self._log_path.open("a", encoding="utf-8") as handle:
            handle.write(line)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "AVIAReferenceVendor/1"
    state: VendorState  # set on the subclass that serve() builds
    _entry: dict[str, Any] | None = None  # the request log's entry of the request at hand

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # the request log (--request-log) says what a test needs; stderr stays quiet

    # -- routes ------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") == "/v1/models":
            self._json(
                200,
                {"object": "list", "data": [{"id": self.state.settings.model, "object": "model"}]},
            )
        else:
            self._error(404, "not_found", "unknown path")

    def do_POST(self) -> None:  # noqa: N802
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._drain()
            self._entry = {"time": time.time(), "tenant": None, "path": self.path}
            self._error(404, "not_found", "unknown path")
            return
        started = time.time()
        tenant = self._tenant()
        if tenant is None:
            return
        body = self._body()
        if body is None:
            return
        self._entry = {
            "time": started,
            "tenant": tenant,
            "path": self.path,
            "stream": bool(body.get("stream")),
        }
        self._complete(tenant, body, self._entry)

    # -- the engine --------------------------------------------------------------------

    def _complete(self, tenant: str, body: dict[str, Any], entry: dict[str, Any]) -> int:
        settings = self.state.settings
        if body.get("model") != settings.model:
            return self._error(
                404, "model_not_found", f"the model {body.get('model')!r} does not exist"
            )
        texts = _text_of(body.get("messages"))
        if not texts:
            return self._error(400, "invalid_request_error", "messages must hold text")
        text = "\n".join(texts)
        prompt_tokens = (
            sum(count_tokens(t) + TOKENS_PER_MESSAGE for t in texts)
            + TOKENS_PER_REQUEST
            + settings.template_tokens
        )
        entry["prompt_tokens"] = prompt_tokens
        if prompt_tokens > settings.context_served and settings.reject_oversize:
            if settings.context_served < settings.declared_context:
                # Over-claimed: the engine behind the declaration refuses in its own words.
                return self._json(
                    400,
                    {
                        "error": {
                            "code": 400,
                            "message": f"request ({prompt_tokens} tokens) exceeds the available "
                            f"context size ({settings.context_served} tokens), try increasing it",
                            "type": "exceed_context_size_error",
                            "n_prompt_tokens": prompt_tokens,
                            "n_ctx": settings.context_served,
                        }
                    },
                )
            return self._error(
                400,
                "context_length_exceeded",
                f"This model's maximum context length is {settings.declared_context} tokens; "
                f"the messages have {prompt_tokens}.",
            )
        max_tokens = (
            body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_MAX_TOKENS
        )
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return self._error(
                400, "invalid_request_error", "max_tokens must be a positive integer"
            )

        cached = self.state.cached_tokens(tenant, text)
        entry["cached_tokens"] = cached
        prefill_seconds = (prompt_tokens - cached) * settings.prefill_ms_per_1k_tokens / 1e6
        answer = None
        if settings.leak_over_pool and prompt_tokens > settings.kv_pool_tokens:
            # The incident: the pool ran out, the scheduler went on, and attention read pages
            # that still held another tenant's prompt.
            leaked = self.state.leaked_text(tenant, max_tokens)
            if leaked is not None:
                entry["leaked_from"], answer = leaked
        if answer is None:
            answer = _first_tokens(text, max_tokens)  # the "model" repeats what it was given
        self.state.remember(tenant, text)
        completion_tokens = max(1, min(max_tokens, count_tokens(answer)))
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(answer, usage if include_usage else None, prefill_seconds)
        else:
            time.sleep(prefill_seconds)
            message = {"role": "assistant", "content": ""}
            message[settings.answer_field] = answer
            self._json(
                200,
                {
                    "id": f"chatcmpl-{secrets.token_hex(8)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": settings.served_model or settings.model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "length"}],
                    "usage": usage,
                },
            )
        return 200

    # -- plumbing ----------------------------------------------------------------------

    def _tenant(self) -> str | None:
        header = self.headers.get("Authorization", "")
        key = header[7:].strip() if header.startswith("Bearer ") else ""
        accepted = self.state.settings.accepted_keys
        if not key or (accepted is not None and key not in accepted):
            self._drain()
            self._entry = {"time": time.time(), "tenant": None, "path": self.path}
            shown = f": {key}" if self.state.settings.echo_refused_keys else ""
            self._error(401, "invalid_api_key", f"Incorrect API key provided{shown}.")
            return None
        # The log and the engine know a tenant by a fingerprint, never by its key.
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    def _body(self) -> dict[str, Any] | None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY_BYTES:
            self.close_connection = True
            self._error(
                413 if length > MAX_BODY_BYTES else 400, "invalid_request_error", "bad body size"
            )
            return None
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            self._error(400, "invalid_request_error", "the body is not JSON")
            return None
        if not isinstance(body, dict):
            self._error(400, "invalid_request_error", "the body is not a JSON object")
            return None
        return body

    def _drain(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)
        elif length:
            self.close_connection = True

    def _log_answer(self, status: int) -> None:
        """Logged before the answer is sent, so the log is complete when the client has it."""
        entry, self._entry = self._entry, None
        if entry is not None:
            self.state.log({**entry, "status": status})

    def _json(self, status: int, document: dict[str, Any]) -> int:
        self._log_answer(status)
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return status

    def _error(self, status: int, code: str, message: str) -> int:
        return self._json(status, {"error": {"message": message, "type": code, "code": code}})

    def _stream(self, answer: str, usage: dict[str, int] | None, prefill_seconds: float) -> None:
        self._log_answer(200)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        time.sleep(prefill_seconds)  # nothing is generated before the prompt is prefilled
        base = {
            "id": f"chatcmpl-{secrets.token_hex(8)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.state.settings.served_model or self.state.settings.model,
        }
        field = self.state.settings.answer_field
        pieces = re.findall(r"\S+\s*|\s+", answer) or [answer]
        events = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        ]
        events += [{**base, "choices": [{"index": 0, "delta": {field: p}}]} for p in pieces]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
        if usage is not None:
            events.append({**base, "choices": [], "usage": usage})
        for event in events:
            self._chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")  # the last chunk of a chunked body

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


# -- the command line ----------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The reference vendor's options (shared by `python -m` and `manage.py reference_vendor`)."""
    parser.add_argument("--mode", choices=sorted(MODES), default="launch-day", help="a preset")
    parser.add_argument("--host", default="127.0.0.1", help="loopback only, unless you mean it")
    parser.add_argument("--port", type=int, default=8401, help="0: any free port (printed)")
    parser.add_argument("--model", default="reference-model")
    parser.add_argument("--declared-context", type=int, default=8192, help="tokens (CTX-01)")
    parser.add_argument(
        "--kv-pool-tokens", type=int, help="default: the preset's share of the declared context"
    )
    oversize = parser.add_mutually_exclusive_group()
    oversize.add_argument(
        "--reject-oversize", dest="reject_oversize", action="store_true", default=None
    )
    oversize.add_argument("--accept-oversize", dest="reject_oversize", action="store_false")
    leak = parser.add_mutually_exclusive_group()
    leak.add_argument("--leak-over-pool", dest="leak_over_pool", action="store_true", default=None)
    leak.add_argument("--no-leak", dest="leak_over_pool", action="store_false")
    parser.add_argument("--prefix-cache", choices=CACHE_SCOPES, help="default: the preset's")
    parser.add_argument(
        "--cache-prompts",
        type=int,
        help="keep only the last N prompts' KV per cache scope (1: an engine with one slot); "
        "0: a large block cache; default: the preset's",
    )
    parser.add_argument(
        "--served-context",
        type=int,
        help="the context really served (default: the preset's share of the declared one); "
        "longer prompts are refused as llama.cpp refuses them",
    )
    parser.add_argument(
        "--answer-field", choices=ANSWER_FIELDS, help="where answers carry their text"
    )
    parser.add_argument("--served-model", default="", help="the model name answers carry")
    parser.add_argument(
        "--template-tokens",
        type=int,
        default=0,
        help="fixed tokens a chat template adds to every prompt (a system prompt, say)",
    )
    parser.add_argument(
        "--prefill-ms-per-1k-tokens",
        type=float,
        default=40.0,
        help="simulated prefill time for tokens not in the prefix cache",
    )
    parser.add_argument(
        "--keys-env",
        metavar="VAR",
        help="environment variable with the comma-separated keys to accept (default: any key)",
    )
    parser.add_argument(
        "--echo-refused-keys",
        action="store_true",
        help="repeat a refused key in the 401 message, as some gateways do",
    )
    parser.add_argument("--request-log", type=Path, help="append one JSON line per request")


def settings_from(options: dict[str, Any], environ: dict[str, str]) -> VendorSettings:
    preset = MODES[options["mode"]]

    def chosen(name: str) -> Any:
        value = options.get(name)
        return preset[name] if value is None else value

    declared = options["declared_context"]
    pool = options.get("kv_pool_tokens") or round(declared * preset["kv_pool_share"])
    served = options.get("served_context") or round(declared * preset["served_share"])
    accepted = None
    if options.get("keys_env"):
        accepted = frozenset(
            k.strip() for k in environ.get(options["keys_env"], "").split(",") if k.strip()
        )
    return VendorSettings(
        model=options["model"],
        declared_context=declared,
        kv_pool_tokens=pool,
        reject_oversize=chosen("reject_oversize"),
        leak_over_pool=chosen("leak_over_pool"),
        prefix_cache=chosen("prefix_cache"),
        prefill_ms_per_1k_tokens=options["prefill_ms_per_1k_tokens"],
        accepted_keys=accepted,
        echo_refused_keys=bool(options.get("echo_refused_keys")),
        served_context=served,
        cache_prompts=chosen("cache_prompts"),
        answer_field=chosen("answer_field"),
        served_model=options.get("served_model") or "",
        template_tokens=options.get("template_tokens") or 0,
    )


def serve(options: dict[str, Any], environ: dict[str, str], out: Any = sys.stdout) -> None:
    """Run until interrupted (Ctrl-C or SIGTERM). The first line printed names the address."""
    settings = settings_from(options, environ)
    handler = type(
        "VendorHandler", (Handler,), {"state": VendorState(settings, options.get("request_log"))}
    )
    server = ThreadingHTTPServer((options["host"], options["port"]), handler)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    out.write(
        f"reference vendor ({options['mode']}) listening on http://{host}:{port} "
        f"model={settings.model} declared_context={settings.declared_context} "
        f"kv_pool_tokens={settings.kv_pool_tokens} reject_oversize={settings.reject_oversize} "
        f"leak_over_pool={settings.leak_over_pool} prefix_cache={settings.prefix_cache} "
        f"cache_prompts={settings.cache_prompts} served_context={settings.context_served} "
        f"answer_field={settings.answer_field}\n"
    )
    out.flush()
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m probes.reference_vendor", description=__doc__.split("\n\n")[0]
    )
    add_arguments(parser)
    serve(vars(parser.parse_args(argv)), dict(os.environ))


if __name__ == "__main__":
    main()
