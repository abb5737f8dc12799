"""Fault injection for the GitHub simulator (issue 9: the fault matrix).

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

Pages that shift between requests and deleted comments or runs are state changes, scripted with
``GitHubSimulator.on_request`` (``match(..., page=1)``) and ``delete_comment`` /
``delete_workflow_run`` / ``delete_job``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
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

    def fail(self, method: str, path_regex: str, status: int, times: int | None = 1,
             headers: dict[str, str] | None = None, body: bytes | str | dict | None = None,
             *, after: int = 0, login: str | None = None) -> Fault:
        """Answer the matching requests with ``status`` (default body: GitHub's error JSON;
        ``body`` may be bytes, text or a JSON dict; ``headers`` such as ``Retry-After`` or
        ``X-RateLimit-Remaining`` are sent as given).  ``login`` restricts the fault to requests
        whose token resolves to that REST login (case-insensitive).  Every fault counts every
        matching request; when several would fire, the one added first answers.  Returns the
        ``Fault`` (its ``seen``/``fired`` counters are live)."""
        raw = json.dumps(body).encode() if isinstance(body, dict) else body.encode() if isinstance(body, str) else body
        return self._add_fault(Fault(method, re.compile(path_regex), "status", status, times, after,
                                     dict(headers or {}), raw, login=login))

    def fail_connection(self, method: str, path_regex: str, mode: str = "reset", times: int | None = 1,
                        *, after: int = 0, hang_s: float = 30.0, login: str | None = None) -> Fault:
        """Break the connection of matching requests: ``reset``, ``truncate`` or ``hang`` (module
        docstring).  ``ValueError`` for another mode."""
        if mode not in ("reset", "truncate", "hang"):
            raise ValueError(f"unknown connection fault mode {mode!r}")
        return self._add_fault(Fault(method, re.compile(path_regex), mode, 200, times, after, hang_s=hang_s,
                                     login=login))

    def mutate(self, method: str, path_regex: str, transform: Transform, times: int | None = 1,
               *, after: int = 0, login: str | None = None) -> Fault:
        """Pass the real JSON answer of matching requests through ``transform`` (it gets a deep
        copy and returns the body to send, or ``bytes`` sent verbatim; errors, non-JSON and empty
        answers pass untouched).  The request itself is processed (a POST takes effect)."""
        return self._add_fault(Fault(method, re.compile(path_regex), "mutate", 200, times, after,
                                     login=login, transform=transform))

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
