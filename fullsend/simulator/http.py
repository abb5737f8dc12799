"""HTTP plumbing of the GitHub simulator: request records, faults, ETags, and the request handler.

Order of work for one request: parse → resolve the bearer token → take a matching fault (if
any) → authenticate (401 ``Bad credentials``) → answer from ``sim_routes`` → apply
``If-None-Match`` (304, no body) → record → run ``on_request`` hooks → write the bytes.  Hooks
run after the answer is fixed but before it is sent, so a client that waits for the answer
always sees the hooks' changes on its next request.
"""

from __future__ import annotations

import copy
import json
import re
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, parse_qsl

from fullsend.simulator import graphql
from fullsend.simulator.issuer import issuer_reply
from fullsend.simulator.query import etag_matches, etag_of
from fullsend.simulator.routes import Call, Reply, dispatch, error

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.server import GitHubSimulator
RATE_LIMIT = 5000
FAULT_MODES = ("status", "reset", "truncate", "hang", "mutate")


@dataclass(frozen=True)
class RecordedRequest:
    """One request the simulator received.

    ``path`` is relative to the API prefix (GraphQL is ``/graphql`` under either prefix; a path
    outside the prefix is kept whole); ``raw_path`` is the path as sent.  ``query`` maps names to
    lists of values; ``headers`` have lower-case names.  ``status`` is what was answered (0 when
    a connection fault answered nothing); ``token`` the bearer token or ""; ``login`` the token's
    REST login or "".  ``fault`` names the injected fault mode ("" if none).  ``client_port`` is
    the client's TCP port: two requests with one port came over one kept-alive connection.
    """

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    status: int
    token: str = ""
    login: str = ""
    raw_path: str = ""
    fault: str = ""
    client_port: int = 0

    def json(self) -> Any:
        """The request body parsed as JSON (``None`` if empty or not JSON)."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


@dataclass
class Fault:
    """An injected failure for requests matching ``method`` and ``path_regex`` (``re.search`` on
    the relative path) and, when ``login`` is set, made with a token of that REST login
    (case-insensitive).  The first ``after`` matches pass; the next ``times`` fire (``None`` =
    every later match).  ``mode`` (see ``fullsend.simulator.faults``): ``status`` answers
    ``status``/``headers``/``body``; ``reset`` drops the connection (TCP RST); ``truncate`` sends
    half the real body under a Content-Length promising more; ``hang`` answers nothing for
    ``hang_s`` seconds, then drops the connection; ``mutate`` sends ``transform(real JSON body)``."""

    method: str
    path_regex: re.Pattern[str]
    mode: str = "status"
    status: int = 500
    times: int | None = 1
    after: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    hang_s: float = 30.0
    seen: int = 0
    fired: int = 0
    login: str | None = None
    transform: Callable[[Any], Any] | None = None

    def take(self, method: str, path: str, may_fire: bool = True, login: str = "") -> bool:
        """Count a matching request; True when this fault fires for it (never when ``may_fire``
        is False: an earlier fault already answers this request)."""
        if method != self.method or not self.path_regex.search(path):
            return False
        if self.login is not None and self.login.lower() != login.lower():
            return False
        self.seen += 1
        if not may_fire or self.seen <= self.after or (self.times is not None and self.fired >= self.times):
            return False
        self.fired += 1
        return True

    def reply(self) -> Reply:
        """The answer of a ``status`` fault."""
        if self.body is None:
            body = error(self.status, _REASONS.get(self.status, "Error")).body
            raw = json.dumps(body).encode()
        else:
            raw = self.body
        return Reply(self.status, _Raw(raw), dict(self.headers))


_REASONS = {
    429: "API rate limit exceeded",
    403: "You have exceeded a secondary rate limit",
    500: "Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass(frozen=True)
class _Raw:
    """A body sent verbatim (fault bodies may be anything, e.g. non-JSON)."""

    data: bytes


def _mutated(reply: Reply, fault: Fault, sim: GitHubSimulator) -> Reply:
    """``reply`` with its JSON body passed through the fault's transform (2xx JSON bodies only);
    a transform returning ``bytes`` replaces the body verbatim."""
    if fault.transform is None or not 200 <= reply.status < 300 or reply.body is None or isinstance(reply.body, _Raw):
        return reply
    try:
        body = fault.transform(copy.deepcopy(reply.body))
    except Exception as exc:  # a broken transform is a test bug: surface it, answer unchanged
        sim.errors.append(exc)
        return reply
    if isinstance(body, bytes):  # the transform replaced the body outright (e.g. not JSON)
        body = _Raw(body)
    return Reply(reply.status, body, dict(reply.headers))


def bearer(authorization: str) -> str:
    """The token of an ``Authorization: Bearer|token <t>`` header, or ""."""
    scheme, _, value = authorization.strip().partition(" ")
    return value.strip() if scheme.lower() in ("bearer", "token") else ""


class SimHandler(BaseHTTPRequestHandler):
    """Request handler bound to one simulator (``server.sim``)."""

    protocol_version = "HTTP/1.1"
    server_version = "GitHub.com-simulator"
    # TCP_NODELAY on every accepted connection: the head and the body leave in two writes, and
    # with Nagle on, the body waits for the client's delayed ACK (~40 ms per kept-alive request).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
        return

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PATCH = do_DELETE = do_PUT = do_GET

    def _serve(self) -> None:
        sim: GitHubSimulator = self.server.sim  # type: ignore[attr-defined]  # set by GitHubSimulator on its server
        if any(extension.serve(self) for extension in list(sim.extensions)):
            return
        raw_path, _, raw_query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        token = bearer(headers.get("authorization", ""))
        login, is_bot = sim._identity(token)
        rel, kind = sim._relative(raw_path)
        call = Call(
            self.command,
            rel,
            parse_qs(raw_query, keep_blank_values=True),
            parse_qsl(raw_query, keep_blank_values=True),
            body,
            login,
            is_bot,
        )
        fault = sim._take_fault(self.command, rel, login)
        if fault is not None and fault.mode in ("reset", "hang"):
            self._record(sim, call, headers, raw_path, 0, token, fault.mode)
            if fault.mode == "hang":
                sim._stopping.wait(fault.hang_s)
            self._drop()
            return
        reply = fault.reply() if fault is not None and fault.mode == "status" else self._answer(sim, call, token, kind)
        if fault is not None and fault.mode == "mutate":
            reply = _mutated(reply, fault, sim)
        truncate = fault is not None and fault.mode == "truncate"
        raw = self._finish(sim, call, headers, reply, token, conditional=not truncate)
        self._record(sim, call, headers, raw_path, reply.status, token, fault.mode if fault else "")
        self._write(reply, raw, truncate=truncate)

    def _answer(self, sim: GitHubSimulator, call: Call, token: str, kind: str) -> Reply:
        if kind == "outside":
            return error(404, "Not Found")
        if kind == "token":  # the OIDC token service: its own credential, no API login
            return issuer_reply(sim.issuer, call.method, call.path, call.query, token)
        if not call.login:
            doc = "https://docs.github.com/graphql" if kind == "graphql" else "https://docs.github.com/rest"
            return Reply(401, {"message": "Bad credentials", "documentation_url": doc, "status": "401"})
        try:
            if kind == "graphql":
                return graphql.answer(sim, call) if call.method == "POST" else error(404, "Not Found")
            if call.method != "GET" and not sim._may_write(token):
                return error(403, "Resource not accessible by integration")
            return dispatch(sim, call)
        except Exception as exc:  # a simulator bug must not kill the server; surface it instead
            sim.errors.append(exc)
            return error(500, f"simulator error: {exc!r}")

    def _finish(
        self,
        sim: GitHubSimulator,
        call: Call,
        headers: dict[str, str],
        reply: Reply,
        token: str,
        conditional: bool = True,
    ) -> bytes:
        """Serialize, add ETag/rate-limit headers, and turn a matching ``If-None-Match`` into 304
        (unless ``conditional`` is False: a truncating fault always sends a body)."""
        if isinstance(reply.body, _Raw):
            raw = reply.body.data
        else:
            raw = b"" if reply.body is None else json.dumps(reply.body).encode()
        reply.headers.setdefault("Content-Type", "application/json; charset=utf-8")
        if call.method == "GET" and reply.status == 200 and not isinstance(reply.body, _Raw):
            tag = etag_of(raw)
            reply.headers["ETag"] = tag
            if conditional and etag_matches(headers.get("if-none-match", ""), tag):
                reply.status, raw = 304, b""
                reply.headers.pop("Link", None)
        if call.login:
            used = sim._count_use(token, counted=reply.status != 304)
            limits = {
                "X-RateLimit-Limit": str(RATE_LIMIT),
                "X-RateLimit-Remaining": str(max(RATE_LIMIT - used, 0)),
                "X-RateLimit-Used": str(used),
                "X-RateLimit-Reset": str(sim._rate_reset),
                "X-RateLimit-Resource": "graphql" if call.path == "/graphql" else "core",
            }
            for name, value in limits.items():  # a fault's own rate-limit headers win
                if name.lower() not in {h.lower() for h in reply.headers}:
                    reply.headers[name] = value
        reply.headers.setdefault("X-GitHub-Request-Id", f"SIM:{int(time.monotonic() * 1e6):X}")
        return raw

    def _record(
        self,
        sim: GitHubSimulator,
        call: Call,
        headers: dict[str, str],
        raw_path: str,
        status: int,
        token: str,
        fault: str,
    ) -> None:
        record = RecordedRequest(
            call.method,
            call.path,
            call.query,
            headers,
            call.body,
            status,
            token,
            call.login,
            raw_path,
            fault,
            int(self.client_address[1]),
        )
        sim._record(record)

    def _write(self, reply: Reply, raw: bytes, truncate: bool = False) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.status != 304 and reply.status >= 200 and reply.status != 204:
            self.send_header("Content-Length", str(len(raw) + (64 if truncate else 0)))
        self.end_headers()
        if reply.status != 304:
            self.wfile.write(raw[: len(raw) // 2] if truncate else raw)
        if truncate:
            self.wfile.flush()
            self._drop()

    def _drop(self) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0)."""
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass
        self.close_connection = True
