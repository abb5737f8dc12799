"""HTTP transport for the GitHub adapter: PyGithub's ``Requester``, the rate-limit policy, conditional GETs.

PyGithub's own retry and throttling are switched off (docs/architecture.md "GitHub access"): its
retry re-sends POSTs and sleeps behind the clock's back.  Every request goes through
``fullsend.adapters.github.ratelimit`` (GitHub's documented rule, waits through the injected
``Clock`` within the caller's ``WaitBound``).  GETs are also repeated on 500-504, lost
connections and undecodable bodies (5 attempts); a write is repeated
only after a rate-limited answer, which GitHub never processed.  Every failure surfaces as
``ForgeError`` (``NotFoundError`` on 404, ``RateLimited``, ``MalformedResponse`` for a 2xx write
whose body is not JSON).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from fullsend.adapters.github.ratelimit import (
    Answer,
    RateLimitPolicy,
    Transient,
    WaitBound,
    send_within_limits,
)
from fullsend.errors import ForgeError, MalformedResponse, NotFoundError
from fullsend.ports import Clock

API_VERSION = "2022-11-28"  # WIRE: X-GitHub-Api-Version
#: Said of a request whose connection was never made: a write in it did not happen.
NOTHING_SENT = "no connection was made, so nothing was sent"
DEFAULT_BOUND = WaitBound()


def _requester(base_url: str, token: str, timeout_s: int) -> Any:
    """PyGithub's ``Requester`` for one token, made on the first REST request: PyGithub loads
    ``cryptography`` (about 0.15 s), and the queued run's skip over GraphQL sends no REST request."""
    from github import Auth, Github

    class _Bearer(Auth.Token):
        """``Authorization: Bearer <token>`` (WIRE)."""

        @property
        def token_type(self) -> str:
            return "Bearer"

    return Github(
        auth=_Bearer(token) if token else None,
        base_url=base_url,
        timeout=timeout_s,
        per_page=100,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
        lazy=True,
        api_version=API_VERSION,
    ).requester


@dataclass(frozen=True)
class Response:
    """A decoded response: status, lower-cased headers and the parsed JSON (``None`` if empty)."""

    status: int
    headers: Mapping[str, str]
    data: Any


class Transport:
    """One credential's connection to the REST API (``base_url`` = ``GITHUB_API_URL``).

    ``request`` returns a :class:`Response` for 2xx and 304, raises ``ForgeError`` otherwise.
    ``timeout_s`` bounds each attempt; the worst case of a GET is ``timeout_s × 5`` plus waits.
    ``policy`` is the token's rate-limit memory (shared with its GraphQL client).
    """

    def __init__(
        self, base_url: str, token: str, clock: Clock, timeout_s: int = 15, policy: RateLimitPolicy | None = None
    ) -> None:
        self._clock = clock
        self.policy = policy or RateLimitPolicy(clock)
        self._etags: dict[str, tuple[str, Any, Mapping[str, str]]] = {}
        self._lock = threading.Lock()
        self._connect = (base_url, token, timeout_s)
        self._made: Any = None

    @property
    def requester(self) -> Any:
        """PyGithub's ``Requester`` of this token (made on first use)."""
        with self._lock:
            if self._made is None:
                self._made = _requester(*self._connect)
            return self._made

    def request(
        self,
        verb: str,
        url: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        conditional: bool = False,
        bound: WaitBound = DEFAULT_BOUND,
    ) -> Response:
        """Send one request; ``conditional`` GETs use If-None-Match; rate limits are waited out
        within ``bound`` (``RateLimited`` beyond it, nothing sent)."""
        read = verb == "GET"
        key = url + "?" + json.dumps(params or {}, sort_keys=True)
        cached = self._etags.get(key) if conditional and read else None
        decoded: list[Response] = []

        def send() -> Answer:
            answer = self._send(verb, url, params, body, cached[0] if cached else "")
            if 200 <= answer.status < 300 or (answer.status == 304 and cached):
                decoded[:] = [self._decode(verb, url, answer, cached, key if conditional else "")]
            return answer

        answer = send_within_limits(
            self.policy, self._clock, f"{verb} {url}", "core", bound, send, retry_transient=read
        )
        if decoded:
            return decoded[0]
        raise self._failure(verb, url, answer)

    def _send(self, verb: str, url: str, params: Mapping[str, Any] | None, body: Any, etag: str) -> Answer:
        headers = {"Accept": "application/vnd.github+json"}
        if etag:
            headers["If-None-Match"] = etag
        requester = self.requester
        from github import GithubException  # loaded with the requester

        try:
            status, raw_headers, text = requester.requestJson(
                verb, url, parameters=dict(params) if params else None, headers=headers, input=body
            )
        except (requests.RequestException, GithubException, OSError) as exc:
            unsent = f" ({NOTHING_SENT})" if _never_connected(exc) else ""
            raise Transient(f"{verb} {url} failed: {type(exc).__name__}{unsent}") from None
        except (ValueError, OverflowError) as exc:  # PyGithub reads x-ratelimit-* with float(): a hostile header
            raise Transient(f"{verb} {url}: an answer header could not be read ({str(exc)[:80]})") from None
        except AssertionError:
            raise ForgeError(f"{verb} {url}: a URL outside the API base was refused", None) from None
        answer = Answer(status, {k.lower(): v for k, v in (raw_headers or {}).items()}, text or "")
        if 500 <= status <= 504 and verb == "GET":
            raise Transient(f"{verb} {url}: {status} {_message(answer.text) or 'server error'}", status)
        return answer

    def _decode(
        self, verb: str, url: str, answer: Answer, cached: tuple[str, Any, Mapping[str, str]] | None, key: str
    ) -> Response:
        if answer.status == 304 and cached:
            return Response(200, {**cached[2], **answer.headers}, cached[1])
        try:
            data = json.loads(answer.text) if answer.text.strip() else None
        except ValueError:  # not JSON, or a number beyond Python's digit limit
            if verb == "GET":
                raise Transient(f"{verb} {url}: the response was not JSON") from None
            raise MalformedResponse(f"{verb} {url}", "", "the answer was not JSON", answer.status) from None
        if key and answer.headers.get("etag"):
            with self._lock:
                self._etags[key] = (answer.headers["etag"], data, answer.headers)
        return Response(answer.status, answer.headers, data)

    @staticmethod
    def _failure(verb: str, url: str, answer: Answer) -> ForgeError:
        message = _message(answer.text) or f"HTTP {answer.status}"
        if answer.status == 404:
            return NotFoundError(f"{verb} {url}: 404 {message}")
        return ForgeError(f"{verb} {url}: {answer.status} {message}", answer.status)


def _never_connected(exc: BaseException) -> bool:
    """True when the connection was never made (refused, no route, name unknown): nothing was sent."""
    from urllib3.exceptions import NewConnectionError

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (NewConnectionError, ConnectionRefusedError)):
            return True
        reason = getattr(exc, "reason", None)
        nested = exc.args[0] if isinstance(getattr(exc, "args", None), tuple) and exc.args else None
        exc = (
            reason
            if isinstance(reason, BaseException)
            else nested
            if isinstance(nested, BaseException)
            else exc.__context__  # type: ignore[assignment]
        )
    return False


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
