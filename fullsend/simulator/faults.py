"""Fault injection for the GitHub simulator (the fault matrix).

A fault matches requests by method, path (``re.search`` on the path relative to the API prefix)
and, optionally, by the login of the bearer token (so a receipt POST under the job token can
fail while the status comment POST under the role token goes through).  Counting is per fault:
the first ``after`` matching requests pass, the next ``times`` fire (``None`` = every later
match).  That makes a fault "per endpoint and per request number".

Modes (``Fault.mode``):

* ``status``   answer ``status`` with ``headers`` and ``body`` instead of the real answer
               (500/502/503, 429 or 403 with ``Retry-After``, 403 with ``X-RateLimit-Remaining: 0``
               and ``X-RateLimit-Reset``, 404, or a 200 whose body is not JSON);
* ``reset``    drop the connection with a TCP RST before answering (nothing is processed);
* ``hang``     answer nothing for ``hang_s`` seconds, then drop it (the client's read timeout);
* ``truncate`` process the request, then send half the real body under a Content-Length that
               promises more and drop the connection (``If-None-Match`` is ignored so a body is
               always sent; a POST has therefore taken effect although the client sees an error);
* ``mutate``   process the request and pass the real JSON body through ``transform`` (e.g.
               :func:`drop_field`: a field GitHub normally sends is missing; :func:`not_json`:
               the request took effect but the body is an HTML error page).

Rate limits as GitHub answers them (docs/rules.md#rate-limited): :meth:`secondary_limit`
(403 or 429, with ``Retry-After`` in seconds, as an HTTP-date, unreadable, or no header at all),
:meth:`primary_limit` (403 with ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset``),
:meth:`graphql_rate_limited` (GraphQL's 200 with an error of type ``RATE_LIMITED``) and
:meth:`graphql_errors` (an ``errors`` answer, or any other body).  Shapes GitHub does not
document, for the property test: :func:`set_field` (a field missing, ``null``, of another type,
a list for an object) and :func:`replace_body`.

Pages that shift between requests and deleted comments or runs are state changes, scripted with
``GitHubSimulator.on_request`` (``match(..., page=1)``) and ``delete_comment`` /
``delete_workflow_run`` / ``delete_job``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from fullsend.simulator.http import FAULT_MODES, Fault

Transform = Callable[[Any], Any]


def drop_field(key: str) -> Transform:
    """A ``mutate`` transform removing ``key`` from the body: from a top-level object, from every
    object of a top-level array, and from every object in the arrays a top-level object holds
    (``workflow_runs``, ``jobs``, ``files`` …)."""

    def transform(body: Any) -> Any:
        targets: list[Any] = []
        if isinstance(body, dict):
            targets.append(body)
            for value in body.values():
                if isinstance(value, list):
                    targets.extend(value)
        elif isinstance(body, list):
            targets.extend(body)
        for item in targets:
            if isinstance(item, dict):
                item.pop(key, None)
        return body

    return transform


MISSING = object()  # set_field's value for "the field is not there"
SECONDARY_MESSAGE = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
PRIMARY_MESSAGE = "API rate limit exceeded for installation ID 1."


def set_field(path: str, value: Any) -> Transform:
    """A ``mutate`` transform setting the field at dotted ``path`` (``"user.type"``) to ``value``,
    or removing it when ``value`` is :data:`MISSING`.  A leading ``*.`` applies the rest to every
    item of a top-level array, or of every array a top-level object holds (``jobs``, ``workflow_runs``).
    Absent parents are left alone."""
    each = path.startswith("*.")
    keys = (path[2:] if each else path).split(".")

    def apply(target: Any) -> None:
        for key in keys[:-1]:
            target = target.get(key) if isinstance(target, dict) else None
        if isinstance(target, dict):
            if value is MISSING:
                target.pop(keys[-1], None)
            else:
                target[keys[-1]] = copy.deepcopy(value)

    def transform(body: Any) -> Any:
        if not each:
            apply(body)
        elif isinstance(body, list):
            for item in body:
                apply(item)
        elif isinstance(body, dict):
            for items in [v for v in body.values() if isinstance(v, list)]:
                for item in items:
                    apply(item)
        return body

    return transform


def replace_body(value: Any) -> Transform:
    """A ``mutate`` transform answering ``value`` (any JSON value: a list for an object, a string …)."""
    return lambda body: value


def not_json(
    page: bytes = b"<html><body><h1>Unicorn!</h1> This page is taking too long to load.</body></html>",
) -> Transform:
    """A ``mutate`` transform replacing the body with ``page`` (what a proxy in front of GitHub sends)."""
    return lambda body: page


class FaultInjection:
    """Mixin of ``GitHubSimulator``: the fault-scripting calls.  Needs ``self._lock`` and
    ``self._faults`` (a list) from the simulator."""

    _lock: Any
    _faults: list[Fault]

    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        times: int | None = 1,
        headers: dict[str, str] | None = None,
        body: bytes | str | dict | None = None,
        *,
        after: int = 0,
        login: str | None = None,
    ) -> Fault:
        """Answer the matching requests with ``status`` (default body: GitHub's error JSON;
        ``body`` may be bytes, text or a JSON dict; ``headers`` such as ``Retry-After`` or
        ``X-RateLimit-Remaining`` are sent as given).  ``login`` restricts the fault to requests
        whose token resolves to that REST login (case-insensitive).  Every fault counts every
        matching request; when several would fire, the one added first answers.  Returns the
        ``Fault`` (its ``seen``/``fired`` counters are live)."""
        raw = json.dumps(body).encode() if isinstance(body, dict) else body.encode() if isinstance(body, str) else body
        return self._add_fault(
            Fault(method, re.compile(path_regex), "status", status, times, after, dict(headers or {}), raw, login=login)
        )

    def fail_connection(
        self,
        method: str,
        path_regex: str,
        mode: str = "reset",
        times: int | None = 1,
        *,
        after: int = 0,
        hang_s: float = 30.0,
        login: str | None = None,
    ) -> Fault:
        """Break the connection of matching requests: ``reset``, ``truncate`` or ``hang`` (module
        docstring).  ``ValueError`` for another mode."""
        if mode not in ("reset", "truncate", "hang"):
            raise ValueError(f"unknown connection fault mode {mode!r}")
        return self._add_fault(
            Fault(method, re.compile(path_regex), mode, 200, times, after, hang_s=hang_s, login=login)
        )

    def mutate(
        self,
        method: str,
        path_regex: str,
        transform: Transform,
        times: int | None = 1,
        *,
        after: int = 0,
        login: str | None = None,
    ) -> Fault:
        """Pass the real JSON answer of matching requests through ``transform`` (it gets a deep
        copy and returns the body to send, or ``bytes`` sent verbatim; errors, non-JSON and empty
        answers pass untouched).  The request itself is processed (a POST takes effect)."""
        return self._add_fault(
            Fault(method, re.compile(path_regex), "mutate", 200, times, after, login=login, transform=transform)
        )

    def secondary_limit(
        self,
        method: str,
        path_regex: str,
        retry_after: int | datetime | str | None = None,
        times: int | None = 1,
        *,
        status: int = 403,
        after: int = 0,
        login: str | None = None,
    ) -> Fault:
        """A secondary rate limit: ``status`` (403 or 429) with GitHub's message and ``Retry-After``
        as seconds (int), an HTTP-date (datetime), a raw header value (str) or no header (None)."""
        headers: dict[str, str] = {}
        if isinstance(retry_after, datetime):
            headers["Retry-After"] = format_datetime(retry_after.astimezone(UTC), usegmt=True)
        elif retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return self.fail(
            method, path_regex, status, times, headers, {"message": SECONDARY_MESSAGE}, after=after, login=login
        )

    def primary_limit(
        self,
        method: str,
        path_regex: str,
        reset_at: datetime,
        times: int | None = 1,
        *,
        resource: str = "core",
        after: int = 0,
        login: str | None = None,
    ) -> Fault:
        """The primary limit spent: 403, ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset`` at ``reset_at``."""
        headers = {
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(reset_at.timestamp())),
            "X-RateLimit-Resource": resource,
        }
        return self.fail(
            method, path_regex, 403, times, headers, {"message": PRIMARY_MESSAGE}, after=after, login=login
        )

    def graphql_rate_limited(self, reset_at: datetime, times: int | None = 1, *, login: str | None = None) -> Fault:
        """GraphQL's primary limit: HTTP 200, an error of type ``RATE_LIMITED``, remaining 0 until ``reset_at``."""
        body = {"data": None, "errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1."}]}
        headers = {
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(reset_at.timestamp())),
            "X-RateLimit-Resource": "graphql",
        }
        return self.fail("POST", r"^/graphql$", 200, times, headers, body, login=login)

    def graphql_errors(self, body: Any = None, times: int | None = 1, *, login: str | None = None) -> Fault:
        """GraphQL answering HTTP 200 with ``body`` (default: an ``errors`` list naming a field the
        schema lacks, as GHES answers a newer query)."""
        body = (
            body
            if body is not None
            else {
                "errors": [{"message": "Field 'fullDatabaseId' doesn't exist on type 'IssueComment'", "extensions": {}}]
            }
        )
        raw = json.dumps(body).encode()
        return self._add_fault(Fault("POST", re.compile(r"^/graphql$"), "status", 200, times, 0, {}, raw, login=login))

    def clear_faults(self) -> None:
        """Drop every injected fault."""
        with self._lock:
            self._faults.clear()

    def _add_fault(self, fault: Fault) -> Fault:
        if fault.mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {fault.mode!r}")
        with self._lock:
            self._faults.append(fault)
        return fault

    def _take_fault(self, method: str, path: str, login: str = "") -> Fault | None:
        with self._lock:
            fired: Fault | None = None
            for fault in self._faults:  # every fault counts every matching request
                if fault.take(method, path, may_fire=fired is None, login=login):
                    fired = fault
            return fired
