"""A real inference engine for the probe's tests: llama.cpp's `llama-server` (built by
scripts/llama-server.sh from the pinned llama-cpp-python sdist) serving a tiny random-weight
llama (scripts/make_tiny_llama.py), as processes on loopback ports; a key-routing proxy for a
per-tenant deployment; the server's own truth about its cache; and the probe run as a user
runs it (`manage.py probe`)."""

from __future__ import annotations

import http.client
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from core.outbound import OutboundPolicy, parse_networks
from probes.endpoint import ApiKey
from probes.runner import probe_config_build, probe_run

from ..vendor import closed_loopback_port, process_stop

ROOT = Path(__file__).resolve().parents[3]
SERVED_MODEL = "avia-tiny-llama"
CONTEXT = 4096
# The probe's smallest prefix (probes.checks.MIN_PREFIX_TOKENS): a miss costs the tiny model
# about 150 ms of one idle core.
PREFIX_TOKENS = 1024
START_TIMEOUT = 90
# A DeepSeek-R1-Distill template: the server answers in reasoning_content, content stays "".
REASONING_TEMPLATE = "models/templates/deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja"


@dataclass(frozen=True)
class Engine:
    server: Path  # the llama-server binary
    model: Path  # the tiny llama (GGUF)
    source: Path  # the llama.cpp source it was built from (models/templates, gguf-py)


def engine_find() -> Engine:
    """The engine scripts/test.sh built (its paths in AVIA_LLAMA_SERVER, AVIA_TINY_MODEL and
    AVIA_LLAMA_SOURCE), else build or reuse it here with the same two scripts. Raises
    RuntimeError, with the build's own message, when it cannot be had: never a silent skip."""
    named = [os.environ.get(name) for name in AVIA_ENGINE_VARIABLES]
    if all(named):
        engine = Engine(*(Path(value or "") for value in named))
    else:
        build = subprocess.run(
            [str(ROOT / "scripts" / "llama-server.sh")], capture_output=True, text=True
        )
        if build.returncode != 0:
            raise RuntimeError(f"scripts/llama-server.sh failed:\n{build.stderr[-4000:]}")
        cache = Path(build.stdout.strip().splitlines()[-1])
        made = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "make_tiny_llama.py"), str(cache)],
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            raise RuntimeError(f"scripts/make_tiny_llama.py failed:\n{made.stderr[-4000:]}")
        engine = Engine(
            cache / "bin" / "llama-server",
            Path(made.stdout.strip().splitlines()[-1]),
            cache / "src",
        )
    for path in (engine.server, engine.model, engine.source / REASONING_TEMPLATE):
        if not path.exists():
            raise RuntimeError(f"the real engine is incomplete: {path} does not exist")
    return engine


AVIA_ENGINE_VARIABLES = ("AVIA_LLAMA_SERVER", "AVIA_TINY_MODEL", "AVIA_LLAMA_SOURCE")


@dataclass
class LlamaServer:
    process: subprocess.Popen
    base_url: str  # http://127.0.0.1:PORT
    log: Path


@contextmanager
def llama_server(
    engine: Engine, log_dir: Path, keys: Sequence[str], *flags: str, name: str = "server"
) -> Iterator[LlamaServer]:
    """`llama-server` with the tiny model on a free loopback port, accepting `keys`, with the
    configuration `flags`, until the block ends."""
    for _attempt in range(3):  # a port taken between choosing it and binding it: another
        port = closed_loopback_port()
        log = log_dir / f"llama-server-{name}-{port}.log"
        command = [
            str(engine.server), "--model", str(engine.model), "--alias", SERVED_MODEL,
            "--host", "127.0.0.1", "--port", str(port), "--api-key", ",".join(keys),
            "--ctx-size", str(CONTEXT), "--threads", "1", "--threads-batch", "1",
            "--no-warmup", *flags,
        ]  # fmt: skip
        with log.open("w") as output:
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        base_url = f"http://127.0.0.1:{port}"
        try:
            if _wait_healthy(process, base_url):
                yield LlamaServer(process, base_url, log)
                return
        finally:
            process_stop(process)
        if "bind" not in log.read_text(errors="replace").lower():
            break
    raise RuntimeError(f"llama-server did not start:\n{log.read_text(errors='replace')[-3000:]}")


def _wait_healthy(process: subprocess.Popen, base_url: str) -> bool:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def chat(
    base_url: str, key: str, prompt: str, *, max_tokens: int = 1, timeout: float = 120
) -> tuple[int, dict]:
    """One non-streamed chat completion: (status, the answer's JSON)."""
    request = urllib.request.Request(
        f"{base_url}/v1/chat/completions",
        data=json.dumps(
            {
                "model": SERVED_MODEL,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max_tokens,
                "temperature": 0,
            }
        ).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def random_prompt(words: int) -> str:
    """Fresh text no cache has seen: `words` random hex words (about 2-3 tokens each)."""
    return " ".join(secrets.token_hex(3) for _ in range(words))


@dataclass(frozen=True)
class Reuse:
    """The engine's own account of one prompt sent twice: the second request's
    usage.prompt_tokens_details.cached_tokens of its usage.prompt_tokens."""

    cached_tokens: int
    prompt_tokens: int

    @property
    def share(self) -> float:
        return self.cached_tokens / self.prompt_tokens


def reuse(base_url: str, first_key: str, second_key: str, *, words: int = 160) -> Reuse:
    """Send one fresh prompt (about 1,000 tokens) with `first_key`, then the same with
    `second_key`: how much of the second the engine says it took from its cache."""
    prompt = random_prompt(words)
    for key in (first_key, second_key):
        status, answer = chat(base_url, key, prompt)
        assert status == 200, answer
    usage = answer["usage"]
    return Reuse(usage["prompt_tokens_details"]["cached_tokens"], usage["prompt_tokens"])


class KeyRoutingProxy:
    """A per-tenant deployment's front door: one engine per API key, the request passed to
    the engine that holds its key (streamed through as it arrives); an unknown key gets 401."""

    def __init__(self, routes: Mapping[str, str]) -> None:
        self.routes = dict(routes)  # key -> the engine's base URL
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy.forward(self)

            def do_POST(self) -> None:
                proxy.forward(self)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> KeyRoutingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        authorization = handler.headers.get("Authorization", "")
        upstream = self.routes.get(authorization.removeprefix("Bearer ").strip())
        if upstream is None:
            body = json.dumps({"error": {"message": "Invalid API Key", "code": 401}}).encode()
            handler.send_response(401)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
            return
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        target = urlsplit(upstream)
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
        try:
            headers = {
                name: value
                for name, value in handler.headers.items()
                if name.lower() in ("authorization", "content-type", "accept")
            }
            connection.request(handler.command, handler.path, body=body, headers=headers)
            response = connection.getresponse()
            handler.send_response(response.status)
            handler.send_header("Content-Type", response.getheader("Content-Type", ""))
            handler.send_header("Connection", "close")  # the body ends when the socket does
            handler.end_headers()
            while chunk := response.read1(65536):
                handler.wfile.write(chunk)
                handler.wfile.flush()
        finally:
            connection.close()


@contextmanager
def per_tenant_deployment(
    engine: Engine, log_dir: Path, keys: Sequence[str], *flags: str
) -> Iterator[str]:
    """One engine per key behind a KeyRoutingProxy: its base URL."""
    with ExitStack() as stack:
        routes = {
            key: stack.enter_context(
                llama_server(engine, log_dir, [key], *flags, name=f"tenant{index}")
            ).base_url
            for index, key in enumerate(keys)
        }
        yield stack.enter_context(KeyRoutingProxy(routes)).base_url


def probe_cli(
    base_url: str,
    keys: Sequence[str],
    *,
    declared_context: int = CONTEXT,
    checks: str = "oversize,canary,prefix_cache",
    extra: Sequence[str] = (),
) -> dict:
    """`manage.py probe` as a user runs it (keys in environment variables): its JSON."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PROBE_")}
    environment |= {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        # The engines listen on loopback: the operator's setting that lets the probe reach it.
        "PROBE_ALLOWED_NETWORKS": "127.0.0.0/8",
        "REAL_ENGINE_KEY_A": keys[0],
        "REAL_ENGINE_KEY_B": keys[1],
    }
    command = [
        sys.executable, "manage.py", "probe", "--base-url", base_url, "--model", SERVED_MODEL,
        "--declared-context", str(declared_context), "--key-a-env", "REAL_ENGINE_KEY_A",
        "--key-b-env", "REAL_ENGINE_KEY_B", "--checks", checks,
        "--prefix-tokens", str(PREFIX_TOKENS), "--rate", "100", *extra,
    ]  # fmt: skip
    completed = subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr
    for key in keys:
        assert key not in completed.stdout and key not in completed.stderr
    return json.loads(completed.stdout)


def prefix_cache_run(base_url: str, keys: Sequence[str]) -> dict:
    """One run of the prefix-cache check alone, through the runner `manage.py probe` uses:
    the check's result as the probe reports it."""
    config = probe_config_build(
        base_url=base_url,
        model=SERVED_MODEL,
        declared_context=CONTEXT,
        key_a=ApiKey(keys[0]),
        key_b=ApiKey(keys[1]),
        allow_http=False,
        checks=["prefix_cache"],
        prefix_tokens=PREFIX_TOKENS,
        rate_per_key=100,
        outbound=OutboundPolicy(allowed_networks=parse_networks(["127.0.0.0/8"])),
    )
    return probe_run(config).to_dict()["checks"]["prefix_cache"]
