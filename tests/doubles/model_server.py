"""Shared plumbing of the scripted model servers that drive the real agent CLIs offline.

``FakeModelServer`` is a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 (an ephemeral port) that
records every request, refuses to answer more than ``max_requests`` model calls (a runaway CLI
then fails instead of looping), and lets a test wait until a request it
expects has arrived.  The wire dialects live in ``anthropic_server`` (Messages API) and
``openai_server`` (Responses API); both answer a model call from a *script*: a function of the
request body returning a ``Reply`` (text, or one tool call), so the conversation is keyed on its
state, never on a call counter.

Replies name tools by a *hint* (``"bash"``); the dialect picks the matching tool the CLI
offered in the request's ``tools[]`` (Claude Code calls it ``Bash``, pi ``bash``, Codex
``exec_command`` or ``shell``).  Every tool call gets a fresh id: a reused id makes Claude Code
loop.

This is a test program, not part of the action: it reads its own clock.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
DEFAULT_MAX_REQUESTS = 40
WAIT_S = 60.0


@dataclass(frozen=True)
class ToolCall:
    """One tool call: ``hint`` names the tool family (``bash``); ``command`` is the shell line;
    ``background``: ask the CLI to run it as a background task (Claude Code's ``run_in_background``);
    ``input``: the call's whole input instead (another tool's: ``Read``'s ``file_path``, ``Agent``'s
    ``prompt``), as the Anthropic dialect sends it."""

    hint: str
    command: str = ""
    background: bool = False
    input: dict[str, Any] | None = None


@dataclass(frozen=True)
class ModelError:
    """A scripted model failure: the HTTP ``status`` (200: an error event inside the stream, where
    the dialect has one), the API's error ``type`` and ``code``, and its ``message``."""

    status: int
    type: str
    message: str
    code: str = ""


@dataclass(frozen=True)
class Reply:
    """A scripted model answer: some text, then optionally one tool call (stop = tool use).

    ``stop`` overrides the stop reason of a text answer (e.g. ``max_tokens``); ``error`` makes
    the call fail instead (see ``ModelError``); ``delay_s`` holds the answer back that long (the
    CLI's turn is busy waiting for its model meanwhile).
    """

    text: str = ""
    tool: ToolCall | None = None
    stop: str = ""
    error: ModelError | None = None
    delay_s: float = 0.0


Script = Callable[[dict[str, Any]], Reply]


@dataclass
class ModelCall:
    """One model request as received: ``path``, parsed JSON ``body`` and the ``reply`` given."""

    path: str
    body: dict[str, Any]
    reply: Reply | None = None
    tool_id: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def new_tool_id(prefix: str) -> str:
    """A tool-use id never used before in this process."""
    return f"{prefix}{uuid.uuid4().hex[:20]}"


def texts_in(value: object) -> Iterable[str]:
    """Every string found anywhere inside a decoded JSON value (depth first)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts_in(item)


def assistant_turns_done(body: dict[str, Any]) -> int:
    """How many assistant answers (messages or tool calls) the request's conversation holds, in
    either dialect: Messages API ``messages`` or Responses API ``input``."""
    items = body.get("messages") or body.get("input") or []
    return sum(
        1
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and (item.get("role") == "assistant" or item.get("type") == "function_call")
    )


@dataclass
class _State:
    calls: list[ModelCall] = field(default_factory=list)
    other: list[tuple[str, str]] = field(default_factory=list)
    refused: int = 0


class FakeModelServer:
    """Base of the scripted servers; use as a context manager (``with FakeAnthropic(...) as s``).

    Subclasses implement ``is_model_call(method, path)`` and ``answer(handler, call)``; other
    requests get ``other_response(method, path)``.  ``base_url`` is ``http://127.0.0.1:<port>``.
    """

    def __init__(self, script: Script, max_requests: int = DEFAULT_MAX_REQUESTS) -> None:
        self.script = script
        self.max_requests = max_requests
        self._state = _State()
        self._changed = threading.Condition()
        self._server = ThreadingHTTPServer((HOST, 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}"

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- what tests read --------------------------------------------------------------------

    @property
    def calls(self) -> list[ModelCall]:
        """The model calls answered so far (a copy), in arrival order."""
        with self._changed:
            return list(self._state.calls)

    @property
    def refused(self) -> int:
        """How many model calls were refused for exceeding ``max_requests``."""
        with self._changed:
            return self._state.refused

    def other_requests(self) -> list[tuple[str, str]]:
        """(method, path) of every request that was not a model call."""
        with self._changed:
            return list(self._state.other)

    def wait_for(self, predicate: Callable[[list[ModelCall]], bool], what: str, timeout_s: float = WAIT_S) -> None:
        """Block until ``predicate(calls)`` holds; raise ``AssertionError`` naming ``what`` after ``timeout_s``."""
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(list(self._state.calls)), timeout=timeout_s):
                raise AssertionError(f"the model server never saw {what} ({len(self._state.calls)} calls)")

    def saw_text(self, needle: str) -> bool:
        """True when some model request carried ``needle`` inside one of its strings."""
        return any(needle in text for call in self.calls for text in texts_in(call.body))

    # -- hooks for the dialects ---------------------------------------------------------------

    def scripted_reply(self, call: ModelCall) -> Reply:
        """The script's reply to ``call`` (recorded on it), after its ``delay_s``."""
        reply = self.script(call.body)
        call.reply = reply
        if reply.delay_s:
            threading.Event().wait(reply.delay_s)
        return reply

    def is_model_call(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def answer(self, handler: BaseHTTPRequestHandler, call: ModelCall) -> None:
        raise NotImplementedError

    def other_response(self, method: str, path: str) -> tuple[int, dict[str, Any] | None]:
        """Status and JSON body for a request that is not a model call (default 404)."""
        return 404, {"error": {"type": "not_found_error", "message": f"no route for {method} {path}"}}

    # -- internals -----------------------------------------------------------------------------

    def _record_call(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> ModelCall | None:
        with self._changed:
            if len(self._state.calls) >= self.max_requests:
                self._state.refused += 1
                return None
            call = ModelCall(path, body, headers=dict(headers or {}))
            self._state.calls.append(call)
            return call

    def _answered(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _record_other(self, method: str, path: str) -> None:
        with self._changed:
            self._state.other.append((method, path))
            self._changed.notify_all()


def send_json(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any] | None) -> None:
    """Write a complete JSON response (or an empty one when ``body`` is None)."""
    data = json.dumps(body).encode() if body is not None else b""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


def send_sse(handler: BaseHTTPRequestHandler, events: list[tuple[str, dict[str, Any]]]) -> None:
    """Write a whole Server-Sent-Events stream (``event:`` + ``data:`` per event) and close it."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, data in events:
        handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
    handler.wfile.flush()
    handler.close_connection = True


def _handler_for(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
            pass

        def _read_body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            return body if isinstance(body, dict) else {}

        def _serve(self) -> None:
            path = self.path.split("?", 1)[0]
            body = self._read_body() if self.command == "POST" else {}
            if self.command == "POST" and server.is_model_call(self.command, path):
                call = server._record_call(path, body, {k.lower(): v for k, v in self.headers.items()})
                if call is None:
                    send_json(self, 429, {"error": {"type": "rate_limit_error", "message": "request cap reached"}})
                    return
                try:
                    server.answer(self, call)
                finally:
                    server._answered()
                return
            server._record_other(self.command, path)
            status, payload = server.other_response(self.command, path)
            send_json(self, status, payload)

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _serve

    return Handler
