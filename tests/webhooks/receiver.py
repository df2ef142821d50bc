"""A webhook receiver for the tests: a real HTTP server on a loopback port that records every
request and answers with the statuses it is told to, in order (then 200)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    answers: list[int] = field(default_factory=list)  # statuses still to give, in order
    requests: list[Received] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def do_POST(self) -> None:  # noqa: N802 — http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.receiver.requests.append(Received(self.path, dict(self.headers.items()), body))
        status = self.receiver.answers.pop(0) if self.receiver.answers else 200
        self.send_response(status)
        if 300 <= status < 400:
            self.send_header("Location", "/elsewhere")
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(f"receiver says {status}".encode())

    def log_message(self, *args) -> None:
        pass


def start_receiver() -> tuple[Receiver, ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    receiver = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/hooks/avia")
    server.RequestHandlerClass = type("Handler", (_Handler,), {"receiver": receiver})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver, server
