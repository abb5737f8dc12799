"""A scripted HTTP server on 127.0.0.1 (stdlib ``http.server`` in a thread) and a fake clock."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

DROP = "drop"  # close the connection without answering (a transport error for the client)


@dataclass
class FakeClock:
    """``fullsend.ports.Clock`` that never sleeps: ``sleep`` advances time and is recorded."""

    t: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return datetime(2026, 9, 18, 12, 0, tzinfo=UTC) + timedelta(seconds=self.t - 1000.0)

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.t += seconds
        return True


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float


class ScriptedServer:
    """Answers each path from a script: a list of ``(status, body)`` or ``DROP``; the last entry
    repeats.  ``on_request`` runs first for every request (e.g. to advance a fake clock).
    """

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.script: dict[str, list[Any]] = {}
        self.seen: list[Seen] = []
        self.on_request: Callable[[], None] | None = None
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                owner._handle(self)

            def do_POST(self) -> None:
                owner._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        parts = urlsplit(handler.path)
        with self._lock:
            if self.on_request is not None:
                self.on_request()
            self.seen.append(
                Seen(handler.command, parts.path, parse_qs(parts.query), dict(handler.headers), body, self.clock.t)
            )
            steps = self.script.get(parts.path, [(404, {"message": "Not Found"})])
            step = steps.pop(0) if len(steps) > 1 else steps[0]
        if step == DROP:
            handler.close_connection = True
            return
        status, payload = step
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
