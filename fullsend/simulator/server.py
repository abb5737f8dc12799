"""A stateful GitHub REST simulator: a real HTTP server on 127.0.0.1 (stdlib ``ThreadingHTTPServer``).

Used by the adapter tests, the end-to-end tests (the action runs as a subprocess against it) and
``fullsend demo``.  It serves what the action reads and writes (docs/architecture.md "GitHub access"): a run and
its jobs, the shim's runs
(``created`` filter, newest first, Link pagination), issue, pull request, comments (GET with
``since``, POST, PATCH), reviews, compare, ``/user``, ``/app`` and GraphQL ``viewer``.  Response
bodies follow GitHub's OpenAPI description (tests/simulator/test_openapi_shapes.py checks that).

Example::

    with GitHubSimulator(tokens={"ghs_job": Identity("github-actions[bot]")}) as sim:
        sim.add_workflow_run(id=1, path=".github/workflows/fullsend.yml")
        requests.get(f"{sim.api_url}/repos/org/repo/actions/runs/1",
                     headers={"Authorization": "Bearer ghs_job"})

Scripting state: the calls inherited from ``ItemsState``/``ActionsState`` (``add_workflow_run``,
``add_job``, ``add_pull_request``, ``move_head``, ``add_comment`` …).  Time: ``on_request`` and
``at``.  Faults (``fullsend.simulator.faults``): ``fail``, ``fail_connection``, ``mutate``,
``clear_faults``, each per endpoint, per request number and optionally per token login.
Observation: ``requests``,
``request_count``, ``counted_request_count``, ``reset_requests``, ``errors``, and a comment's
versions (``content_edits``, ``EditHistory``: GraphQL's ``userContentEdits``).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from fullsend.core.identity import Identity
from fullsend.simulator.edits import EditHistory
from fullsend.simulator.faults import FaultInjection
from fullsend.simulator.http import Fault, RecordedRequest, SimHandler
from fullsend.simulator.issuer import ISSUER_PATH, Issuer
from fullsend.simulator.shapes import Urls, rest_login, stable_id

Predicate = Callable[[RecordedRequest], bool]


class Extension(Protocol):
    """A server of other paths on the simulator's port (``GitHubSimulator.extensions``)."""

    def serve(self, handler: BaseHTTPRequestHandler) -> bool:
        """Answer the request when it is one of this extension's paths; False (nothing read or sent) otherwise."""
        ...


Action = Callable[["GitHubSimulator"], None]
HOST = "127.0.0.1"


class GitHubSimulator(FaultInjection, EditHistory):
    """The simulator.  The socket is bound at construction, so ``api_url`` is known before
    ``start()``; ``start()`` serves on a daemon thread, ``stop()`` shuts down (also a context
    manager).  ``prefix`` ``""`` serves at ``/`` with GraphQL at ``/graphql``; ``"/api/v3"``
    serves GHES-style with GraphQL at ``/api/graphql``.
    ``tokens`` maps bearer tokens to identities (``Identity.bot`` true ⇒ an App).  ``clock``
    (default: real UTC now) stamps everything the server creates.  ``repository_links`` writes
    Link headers as GitHub does, under ``/repositories/{id}/…`` (both forms are served)."""

    def __init__(
        self,
        owner: str = "org",
        repo: str = "repo",
        *,
        prefix: str = "",
        tokens: dict[str, Identity] | None = None,
        clock: Callable[[], datetime] | None = None,
        repository_links: bool = False,
    ) -> None:
        self._server = ThreadingHTTPServer((HOST, 0), SimHandler)
        self._server.daemon_threads = True
        self._server.sim = self  # type: ignore[attr-defined]  # read back by SimHandler; http.server has no typed slot
        port = self._server.server_address[1]
        self.prefix = prefix.rstrip("/")
        web = f"http://{HOST}:{port}"
        super().__init__(
            Urls(web + self.prefix, web, owner, repo, stable_id("repo", owner, repo, digits=9), repository_links), clock
        )
        self.api_url = self.urls.api
        #: The OIDC issuer and token service (``fullsend.simulator.issuer``): ``issuer.url`` is the
        #: ``iss``, ``oidc_request_url`` the job's ``ACTIONS_ID_TOKEN_REQUEST_URL``.
        self.issuer = Issuer(web + ISSUER_PATH, lambda: self._clock())
        self.oidc_request_url = f"{self.issuer.url}/request?api-version=2.0"
        gql = self.prefix[: -len("/v3")] if self.prefix.endswith("/v3") else self.prefix
        self._graphql_path = f"{gql}/graphql"
        self.graphql_url = web + self._graphql_path
        self._tokens: dict[str, tuple[str, bool]] = {}
        self._read_only: set[str] = set()
        self._contents: dict[str, str] = {}
        #: Servers of other paths on this port (the git server, the Apps' token endpoints): each
        #: ``serve(handler)`` answers a request it owns and returns True, before the REST API.
        self.extensions: list[Extension] = []
        for token, identity in (tokens or {}).items():
            self.add_token(token, identity.login, "Bot" if identity.bot else "User")
        self._requests: list[RecordedRequest] = []
        self._hooks: list[list[Any]] = []
        self._faults: list[Fault] = []
        self._usage: dict[str, int] = {}
        self._timers: list[tuple[float, Action]] = []
        self._live_timers: list[threading.Timer] = []
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._started_at = 0.0
        self._rate_reset = int(self._clock().timestamp()) + 3600
        self.errors: list[BaseException] = []

    # ----------------------------------------------------------------------------- lifecycle
    def start(self) -> GitHubSimulator:
        """Serve on a daemon thread and arm the ``at`` timers; returns self."""
        with self._lock:
            if self._thread is not None:
                return self
            self._thread = threading.Thread(
                target=self._server.serve_forever, args=(0.05,), name="github-sim", daemon=True
            )
            self._thread.start()
            self._started_at = time.monotonic()
            for delay_s, action in self._timers:
                self._arm(delay_s, action)
        return self

    def stop(self) -> None:
        """Stop serving, cancel timers and close the socket (idempotent)."""
        self._stopping.set()
        for timer in list(self._live_timers):
            timer.cancel()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
        self._server.server_close()

    def __enter__(self) -> GitHubSimulator:
        return self.start()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        """Stop; then re-raise the first error of a scripted action or of the simulator itself,
        unless the block already raised."""
        self.stop()
        if exc_type is None and self.errors:
            raise self.errors[0]

    # ----------------------------------------------------------------------------- identities
    def add_token(
        self, token: str, login: str, user_type: str = "Bot", *, read_only: bool = False, contents: str = "read"
    ) -> None:
        """Accept bearer ``token`` as ``login``; ``user_type`` ``Bot`` (an App: REST login gets
        ``[bot]``, GraphQL drops it) or ``User``.  A ``read_only`` token gets 403 "Resource not
        accessible by integration" on every REST write (a job token without ``issues: write``).
        ``contents`` (``read`` or ``write``) is what the git server lets the token do."""
        with self._lock:
            is_bot = user_type == "Bot"
            self._tokens[token] = (rest_login(login, is_bot), is_bot)
            self._contents[token] = contents
            self._read_only.discard(token)
            if read_only:
                self._read_only.add(token)

    def contents_permission(self, token: str) -> str:
        """``read`` or ``write`` for a known token, ``""`` for another."""
        with self._lock:
            return self._contents.get(token, "") if token in self._tokens else ""

    def _identity(self, token: str) -> tuple[str, bool]:
        with self._lock:
            return self._tokens.get(token, ("", False)) if token else ("", False)

    def _may_write(self, token: str) -> bool:
        with self._lock:
            return token not in self._read_only

    def _relative(self, raw_path: str) -> tuple[str, str]:
        """(path relative to the prefix, kind): kind ``api``, ``graphql``, ``token`` (the OIDC
        token service, ``fullsend.simulator.issuer``, path kept whole) or ``outside`` (a path
        outside the prefix, kept whole and answered 404)."""
        if raw_path == self._graphql_path:
            return "/graphql", "graphql"
        if raw_path.startswith(ISSUER_PATH + "/"):
            return raw_path, "token"
        if not self.prefix:
            return raw_path, "api"
        if raw_path == self.prefix or raw_path.startswith(self.prefix + "/"):
            return raw_path[len(self.prefix) :] or "/", "api"
        return raw_path, "outside"

    # ----------------------------------------------------------------------------- time-scripting
    def on_request(self, predicate: Predicate, action: Action, once: bool = True) -> None:
        """Run ``action(sim)`` right after answering a request matching ``predicate`` (the answer
        is fixed first; the bytes leave after the action, so the client's next request sees its
        changes).  ``once`` ⇒ only the first match.  Errors go to ``errors``."""
        with self._lock:
            self._hooks.append([predicate, action, once, False])

    @staticmethod
    def match(
        method: str | None = None, path_regex: str | None = None, status: int | None = None, page: int | None = None
    ) -> Predicate:
        """A predicate for ``on_request``: method equal, ``re.search(path_regex, path)``, status
        equal, and the ``page`` query parameter equal (an absent one is page 1)."""
        pattern = re.compile(path_regex) if path_regex else None
        return lambda r: (
            (method is None or r.method == method)
            and (pattern is None or bool(pattern.search(r.path)))
            and (status is None or r.status == status)
            and (page is None or r.query.get("page", ["1"])[0] == str(page))
        )

    def at(self, delay_s: float, action: Action) -> None:
        """Run ``action(sim)`` ``delay_s`` (real) seconds after ``start()`` on a timer thread."""
        with self._lock:
            self._timers.append((delay_s, action))
            if self._thread is not None:
                self._arm(max(0.0, self._started_at + delay_s - time.monotonic()), action)

    def _arm(self, delay_s: float, action: Action) -> None:
        timer = threading.Timer(delay_s, self._run_action, args=(action,))
        timer.daemon = True
        self._live_timers.append(timer)
        timer.start()

    def _run_action(self, action: Action) -> None:
        if self._stopping.is_set():
            return
        try:
            action(self)
        except Exception as exc:  # reported through errors / __exit__
            self.errors.append(exc)

    # ----------------------------------------------------------------------------- observation
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    def request_count(self, method: str | None = None, path_regex: str | None = None, status: int | None = None) -> int:
        """How many recorded requests match (``re.search`` on the relative path)."""
        keep = self.match(method, path_regex, status)
        return sum(1 for r in self.requests if keep(r))

    def counted_request_count(self, method: str | None = None, path_regex: str | None = None) -> int:
        """Like ``request_count`` but without 304s (those cost no primary rate limit)."""
        keep = self.match(method, path_regex)
        return sum(1 for r in self.requests if keep(r) and r.status != 304)

    def reset_requests(self) -> None:
        """Forget the recorded requests (faults, hooks and state stay)."""
        with self._lock:
            self._requests.clear()

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)
            due = [h for h in self._hooks if not h[3] and self._safe_match(h[0], record)]
            for hook in due:
                hook[3] = hook[2]
        for _, action, _, _ in due:
            self._run_action(action)

    def _safe_match(self, predicate: Predicate, record: RecordedRequest) -> bool:
        try:
            return bool(predicate(record))
        except Exception as exc:  # reported through errors / __exit__
            self.errors.append(exc)
            return False

    def _count_use(self, token: str, counted: bool) -> int:
        with self._lock:
            self._usage[token] = self._usage.get(token, 0) + (1 if counted else 0)
            return self._usage[token]
