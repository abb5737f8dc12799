"""HTTP transport for the GitHub adapter: REST over the forge's urllib3 pool, the rate-limit policy, conditional GETs.

Requests go through the forge's :class:`~fullsend.adapters.github.client.Client` (the one
HTTP client and pool, shared with GraphQL: docs/architecture.md "GitHub access"); nothing repeats or
sleeps behind the clock's back.  Every request goes through
``fullsend.adapters.github.ratelimit`` (GitHub's documented rule, waits through the injected
``Clock`` within the caller's ``WaitBound``).  GETs are also repeated on 500-504, lost
connections and undecodable bodies (5 attempts); a write is repeated
only after a rate-limited answer, which GitHub never processed.  Every failure surfaces as
``ForgeError`` (``NotFoundError`` on 404, ``RateLimited``, ``MalformedResponse`` for a 2xx write
whose body is not JSON).

URLs: a path (``/repos/…``) is put under the base URL's path (``/api/v3`` on GitHub Enterprise
Server); an absolute URL (a ``Link`` page, a redirect) is sent as its path and query to the base
URL's host, so the token never travels to a host ``GITHUB_API_URL`` does not name.  A 301 to
the same scheme and host (a renamed repository) is followed, at most :data:`REDIRECTS_MAX` times.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fullsend.adapters.github.client import Client, SendFailed
from fullsend.adapters.github.ratelimit import (
    Answer,
    RateLimitPolicy,
    Transient,
    WaitBound,
    send_within_limits,
)
from fullsend.errors import ForgeError, MalformedResponse, NotFoundError

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Clock

API_VERSION = "2022-11-28"  # WIRE: X-GitHub-Api-Version
#: Said of a request whose connection was never made: a write in it did not happen.
NOTHING_SENT = "no connection was made, so nothing was sent"
DEFAULT_BOUND = WaitBound()
ACCEPT = "application/vnd.github+json"  # WIRE: GitHub's media type
REDIRECTS_MAX = 3  # 301s followed within one attempt


class ApiBase:
    """The REST base URL (``GITHUB_API_URL``): where a path or a server-given URL is sent."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.scheme, self.host = parts.scheme, parts.hostname or ""
        self._origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        self._prefix = parts.path.rstrip("/")
        self.usable = parts.scheme in ("http", "https") and bool(self.host)

    def url(self, url: str, params: Mapping[str, Any] | None) -> str:
        """The URL to send: ``/path`` under the base's path prefix; an absolute URL's path and
        query on the base's scheme, host and port; ``params`` merged into the query."""
        if url.startswith("/"):
            path = self._prefix + url
        else:
            parts = urlsplit(url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
        return self._origin + with_parameters(path, params)

    def same_host(self, url: str) -> bool:
        """True when ``url`` (a redirect's ``Location``) names the base's scheme and host."""
        parts = urlsplit(url)
        return not parts.netloc or (parts.scheme == self.scheme and (parts.hostname or "") == self.host)


def with_parameters(path: str, params: Mapping[str, Any] | None) -> str:
    """``path`` (with or without a query) with ``params`` merged into its query (``params``
    win), sorted, booleans spelled ``true``/``false`` as GitHub expects."""
    path, _, query = path.partition("?")
    merged: dict[str, list[Any]] = dict(parse_qs(query))
    merged.update({k: v if isinstance(v, list) else [v] for k, v in (params or {}).items()})
    pairs = sorted((k, str(v).lower() if isinstance(v, bool) else v) for k, vs in merged.items() for v in vs)
    return f"{path}?{urlencode(pairs)}" if pairs else path


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
    ``policy`` is the token's rate-limit memory (shared with its GraphQL client);
    ``client`` the forge's HTTP client (shared with GraphQL and the other credential).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        clock: Clock,
        timeout_s: int = 15,
        policy: RateLimitPolicy | None = None,
        client: Client | None = None,
    ) -> None:
        self._clock = clock
        self.policy = policy or RateLimitPolicy(clock)
        self._etags: dict[str, tuple[str, Any, Mapping[str, str]]] = {}
        self._lock = threading.Lock()
        self._base, self._token, self._timeout_s = ApiBase(base_url), token, timeout_s
        self._client = client or Client()

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
        if not self._base.usable:
            raise ForgeError(f"{verb} {url}: a URL outside the API base was refused", None)
        target = self._base.url(url, params)
        data = json.dumps(body) if body is not None else None
        headers = {"Accept": ACCEPT, "X-GitHub-Api-Version": API_VERSION}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"  # WIRE
        if etag:
            headers["If-None-Match"] = etag
        if data is not None:
            headers["Content-Type"] = "application/json"
        for _ in range(REDIRECTS_MAX + 1):
            answer = self._exchange(verb, url, target, headers, data)
            location = answer.headers.get("location", "")
            if answer.status != 301 or not location:
                break
            if not self._base.same_host(location):
                raise ForgeError(f"{verb} {url}: 301 to a host outside the API base, not followed", 301)
            target = self._base.url(location, None)  # a renamed repository: same request, new path
        if 500 <= answer.status <= 504 and verb == "GET":
            raise Transient(f"{verb} {url}: {answer.status} {_message(answer.text) or 'server error'}", answer.status)
        return answer

    def _exchange(self, verb: str, url: str, target: str, headers: Mapping[str, str], data: str | None) -> Answer:
        """One HTTP exchange; a failure without an answer is ``Transient`` (saying so when no
        connection was made)."""
        try:
            resp = self._client.send(verb, target, headers, data, self._timeout_s)
        except SendFailed as exc:
            unsent = f" ({NOTHING_SENT})" if exc.never_connected else ""
            raise Transient(f"{verb} {url} failed: {exc}{unsent}") from None
        return Answer(resp.status, resp.headers, resp.text)

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
