"""HTTP transport for the GitHub adapter: PyGithub's ``Requester``, retries, conditional GETs.

PyGithub's own retry and throttling are switched off (docs/architecture.md "GitHub access"): its
retry re-sends POSTs and sleeps behind the clock's back.  GETs are retried here with tenacity,
sleeping through the injected ``Clock``: up to 5 attempts on 429, 500-504 and rate-limit 403,
honouring ``Retry-After`` and ``x-ratelimit-reset``.  Writes are never retried.  Every failure
surfaces as ``ForgeError`` (``NotFoundError`` on 404).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests
from github import Auth, Github, GithubException
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from fullsend.errors import ForgeError, NotFoundError
from fullsend.ports import Clock

API_VERSION = "2022-11-28"  # WIRE: X-GitHub-Api-Version
MAX_ATTEMPTS = 5
MAX_WAIT_S = 60.0


class _Bearer(Auth.Token):
    """``Authorization: Bearer <token>`` (WIRE)."""

    @property
    def token_type(self) -> str:
        return "Bearer"


@dataclass(frozen=True)
class Response:
    """A decoded response: status, lower-cased headers and the parsed JSON (``None`` if empty)."""

    status: int
    headers: Mapping[str, str]
    data: Any


class _Retryable(ForgeError):
    """A transient failure that carries how long the server asked us to wait (seconds)."""

    def __init__(self, message: str, status: int | None, wait_s: float | None) -> None:
        super().__init__(message, status)
        self.wait_s = wait_s


def _rate_limited_403(status: int, headers: Mapping[str, str], body: str) -> bool:
    if status != 403:
        return False
    if headers.get("retry-after") or headers.get("x-ratelimit-remaining") == "0":
        return True
    return "rate limit" in body.lower()


def _server_wait_s(headers: Mapping[str, str], now_epoch: float) -> float | None:
    retry_after = headers.get("retry-after", "")
    if retry_after.strip().isdigit():
        return float(retry_after.strip())
    reset = headers.get("x-ratelimit-reset", "")
    if headers.get("x-ratelimit-remaining") == "0" and reset.strip().isdigit():
        return max(0.0, float(reset) - now_epoch) + 1.0
    return None


class Transport:
    """One credential's connection to the REST API (``base_url`` = ``GITHUB_API_URL``).

    ``request`` returns a :class:`Response` for 2xx and 304, raises ``ForgeError`` otherwise.
    ``timeout_s`` bounds each attempt; the worst case of a GET is ``timeout_s × 5`` plus waits.
    """

    def __init__(self, base_url: str, token: str, clock: Clock, timeout_s: int = 15) -> None:
        self._clock = clock
        self._etags: dict[str, tuple[str, Any, Mapping[str, str]]] = {}
        self._lock = threading.Lock()
        auth = _Bearer(token) if token else None
        self._gh = Github(
            auth=auth,
            base_url=base_url,
            timeout=timeout_s,
            per_page=100,
            retry=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,
            api_version=API_VERSION,
        )
        self._requester = self._gh.requester

    def request(
        self, verb: str, url: str, params: Mapping[str, Any] | None = None, body: Any = None, conditional: bool = False
    ) -> Response:
        """Send one request (GETs retried, writes not); ``conditional`` GETs use If-None-Match."""
        if verb != "GET":
            return self._once(verb, url, params, body, conditional=False)
        retrying = Retrying(
            stop=stop_after_attempt(MAX_ATTEMPTS),
            retry=retry_if_exception(lambda e: isinstance(e, _Retryable)),
            wait=self._wait,
            sleep=self._clock.sleep,  # type: ignore[arg-type]  # tenacity drops the return value; Clock.sleep's bool is unused here
            reraise=True,
        )
        try:
            return retrying(self._once, verb, url, params, body, conditional)
        except _Retryable as exc:
            raise ForgeError(str(exc), exc.status, transient=True) from None

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = getattr(exc, "wait_s", None)
        if asked is not None:
            return min(float(asked), MAX_WAIT_S)
        return min(2.0 ** (state.attempt_number - 1), MAX_WAIT_S)

    def _once(self, verb: str, url: str, params: Mapping[str, Any] | None, body: Any, conditional: bool) -> Response:
        key = url + "?" + json.dumps(params or {}, sort_keys=True)
        headers = {"Accept": "application/vnd.github+json"}
        cached = self._etags.get(key) if conditional else None
        if cached:
            headers["If-None-Match"] = cached[0]
        try:
            status, raw_headers, text = self._requester.requestJson(
                verb, url, parameters=dict(params) if params else None, headers=headers, input=body
            )
        except (requests.RequestException, GithubException, OSError) as exc:
            raise _Retryable(f"{verb} {url} failed: {type(exc).__name__}", None, None) from None
        except AssertionError:
            raise ForgeError(f"{verb} {url}: a URL outside the API base was refused", None) from None
        hdrs = {k.lower(): v for k, v in (raw_headers or {}).items()}
        if status == 304 and cached:
            return Response(200, {**cached[2], **hdrs}, cached[1])
        return self._decode(verb, url, status, hdrs, text or "", key if conditional else "")

    def _decode(self, verb: str, url: str, status: int, hdrs: Mapping[str, str], text: str, key: str) -> Response:
        if 200 <= status < 300:
            try:
                data = json.loads(text) if text.strip() else None
            except ValueError:
                raise _Retryable(f"{verb} {url}: the response was not JSON", None, None) from None
            if key and hdrs.get("etag"):
                with self._lock:
                    self._etags[key] = (hdrs["etag"], data, hdrs)
            return Response(status, hdrs, data)
        message = _message(text) or f"HTTP {status}"
        if status == 404:
            raise NotFoundError(f"{verb} {url}: 404 {message}")
        if status == 429 or 500 <= status <= 504 or _rate_limited_403(status, hdrs, text):
            wait = _server_wait_s(hdrs, self._clock.now().timestamp())
            raise _Retryable(f"{verb} {url}: {status} {message}", status, wait)
        raise ForgeError(f"{verb} {url}: {status} {message}", status)


def _message(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    msg = data.get("message") if isinstance(data, dict) else None
    return str(msg)[:200] if isinstance(msg, str) else ""


def next_link(headers: Mapping[str, str]) -> str:
    """The ``rel="next"`` URL of a Link header, or ``""``."""
    for part in headers.get("link", "").split(","):
        segs = [s.strip() for s in part.split(";")]
        if len(segs) >= 2 and segs[0].startswith("<") and any(s == 'rel="next"' for s in segs[1:]):
            return segs[0][1:-1]
    return ""
