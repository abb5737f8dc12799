"""GraphQL and REST over the standard library, for the pre-flight skips (docs/architecture.md "Fast skip").

The receipt skip's two queries — the receipt view under the job token, ``viewer { login }``
under the role token — and the head-reviewed skip's three GETs (:meth:`LiteClient.get`) are
sent at once on threads with ``http.client``, so the decision costs one round trip and loads
neither ``requests`` nor ``pydantic``.  What ``requests`` takes from the
environment is taken the same way: the proxy of ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY``
(either case), skipped for a host ``NO_PROXY`` names (a suffix, an IP or a CIDR block, ``*``),
and the CA bundle of ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE``, else certifi's.

Answers are checked by ``fullsend.adapters.github.lite_answers`` (GraphQL) and
``fullsend.adapters.github.lite_rest`` (REST) as strictly as the pydantic models check them; anything in doubt raises
:class:`Undecided`: the skip then leaves the decision to the full pre-flight, which fails open
as always.  No message carries a token.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import json
import os
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

T = TypeVar("T")
RECEIPT_VIEW_QUERY = """
query ReceiptView($owner: String!, $name: String!, $number: Int!, $after: String) {
  viewer { login }
  repository(owner: $owner, name: $name) {
    issueOrPullRequest(number: $number) {
      ... on Issue { comments(first: 100, after: $after) { ...receiptPage } }
      ... on PullRequest { comments(first: 100, after: $after) { ...receiptPage } }
    }
  }
}
fragment receiptPage on IssueCommentConnection {
  pageInfo { hasNextPage endCursor }
  nodes { fullDatabaseId body createdAt updatedAt lastEditedAt url author { __typename login } }
}
""".strip()  # WIRE: GitHub's GraphQL schema names (the receipt view of docs/rules.md#receipt-lists-my-run)
VIEWER_QUERY = "query { viewer { login } }"  # WIRE
REST_ACCEPT = "application/vnd.github+json"  # WIRE, as fullsend.adapters.github.transport
REST_API_VERSION = "2022-11-28"  # WIRE: X-GitHub-Api-Version, as the transport's


class Undecided(Exception):
    """The lite client cannot vouch for an answer; the message says why (never a token)."""


@dataclass(frozen=True)
class LiteAnswer:
    """One HTTP answer: status, lower-cased headers, body text."""

    status: int
    headers: Mapping[str, str]
    text: str


def request_body(query: str, variables: Mapping[str, Any] | None) -> dict[str, Any]:
    """The JSON body of one GraphQL request, exactly as ``GraphQLClient`` sends it."""
    body: dict[str, Any] = {"query": query}
    if variables:
        body["variables"] = dict(variables)
    return body


def prefetch_key(query: str, variables: Mapping[str, Any] | None) -> str:
    """The key an answer of ``query`` with ``variables`` is handed over under."""
    return json.dumps(request_body(query, variables), sort_keys=True)


def rest_prefetch_key(path: str) -> str:
    """The key the answer of a REST GET of ``path`` (its sorted query included, as
    ``transport.with_parameters`` writes it) is handed over under."""
    return "GET " + path


# ---- the environment, as requests reads it -------------------------------------------------------
def _no_proxy(environ: Mapping[str, str]) -> str:
    return environ.get("no_proxy") or environ.get("NO_PROXY") or ""


def _bypassed(host: str, port: int | None, environ: Mapping[str, str]) -> bool:
    """True when ``NO_PROXY`` names ``host``: requests' rule (an IPv4 address matched exactly or
    by a CIDR block, a name exactly or as a parent domain, with or without the port), then the
    standard library's that requests asks last (``*``; names case-insensitive)."""
    raw = _no_proxy(environ)
    entries = [entry for entry in raw.replace(" ", "").split(",") if entry]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.version == 4:
        if any(_in_block(address, entry) if "/" in entry else entry == host for entry in entries):
            return True
    else:
        with_port = f"{host}:{port}" if port else host
        for entry in (e.lstrip(".") for e in entries):
            if entry in (host, with_port) or host.endswith("." + entry) or with_port.endswith("." + entry):
                return True
    return _stdlib_bypass(host, raw)


def _in_block(address: ipaddress.IPv4Address | ipaddress.IPv6Address, entry: str) -> bool:
    """``address`` lies in the IPv4 CIDR block ``entry`` (a mask of 1 to 32 bits, as requests reads it)."""
    base, _, bits = entry.partition("/")
    if not (bits.isascii() and bits.isdigit() and 1 <= int(bits) <= 32):
        return False
    try:
        return address in ipaddress.IPv4Network(f"{base}/{bits}", strict=False)
    except ValueError:
        return False


def _stdlib_bypass(host: str, raw: str) -> bool:
    """``urllib.request.proxy_bypass_environment`` of ``host`` (a host name without its port)
    under ``no_proxy=raw``, without importing ``urllib.request``."""
    if raw == "*":
        return True
    for name in (n.strip().lstrip(".").lower() for n in raw.split(",")):
        if name and (host.lower() == name or host.lower().endswith("." + name)):
            return True
    return False


def proxy_for(url: str, environ: Mapping[str, str]) -> str:
    """The proxy URL requests would use for ``url`` under ``environ`` ("" for none)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host or _bypassed(host, parts.port, environ):
        return ""
    proxies = _environ_proxies(environ)
    for key in (f"{parts.scheme}://{host}", parts.scheme, f"all://{host}", "all"):
        if proxies.get(key):
            proxy = proxies[key]
            return proxy if "://" in proxy else "http://" + proxy
    return ""


def _environ_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """``<scheme>_proxy`` variables as the standard library reads them (a lower-case name wins
    over its upper-case twin, and an empty lower-case one removes it)."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        if value and name.lower().endswith("_proxy"):
            proxies[name[:-6].lower()] = value
    if "REQUEST_METHOD" in environ:  # a CGI request's Proxy: header is not a proxy setting
        proxies.pop("http", None)
    for name, value in environ.items():
        if name.endswith("_proxy") and name == name.lower():
            if value:
                proxies[name[:-6]] = value
            else:
                proxies.pop(name[:-6], None)
    return proxies


def ssl_context(environ: Mapping[str, str]) -> ssl.SSLContext:
    """Verification as requests does it: ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE`` (a file or a
    directory), else certifi's bundle, else the system store."""
    where = environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE") or ""
    if not where:
        try:
            import certifi
        except ImportError:  # pragma: no cover - certifi comes with the locked requirements
            return ssl.create_default_context()
        where = certifi.where()
    if os.path.isdir(where):
        return ssl.create_default_context(capath=where)
    return ssl.create_default_context(cafile=where)


# ---- one request ---------------------------------------------------------------------------------
class LiteClient:
    """POSTs JSON to one URL (``GITHUB_GRAPHQL_URL``) over ``http.client``; ``timeout_s`` bounds
    the connection and every read.  Thread-safe: each call opens its own connection."""

    def __init__(
        self,
        url: str,
        environ: Mapping[str, str],
        timeout_s: float = 15.0,
        user_agent: str = "",
        context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Undecided("the URL is not an http(s) URL with a host")
        self._url, self._parts, self._timeout_s, self._environ = url, parts, timeout_s, environ
        self._proxy = proxy_for(url, environ)
        self._context = (context or ssl_context(environ)) if parts.scheme == "https" else None
        self._agent = user_agent or "fullsend-steer-action"

    def sibling(self, url: str) -> LiteClient:
        """A client for ``url`` (``GITHUB_API_URL`` beside ``GITHUB_GRAPHQL_URL``) with this one's
        environment, timeout and agent, and its CA store once loaded (tens of ms per load)."""
        return LiteClient(url, self._environ, self._timeout_s, self._agent, self._context)

    def post(self, token: str, body: Mapping[str, Any]) -> LiteAnswer:
        """One POST with ``Authorization: Bearer``.  Raises ``Undecided`` when no answer came."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        path = (self._parts.path or "/") + (f"?{self._parts.query}" if self._parts.query else "")
        return self._exchange("POST", path, json.dumps(body).encode("utf-8"), token, headers)

    def get(self, token: str, path: str) -> LiteAnswer:
        """One REST GET of ``path`` (``/repos/…``, its query included) under the URL's path prefix
        (``GITHUB_API_URL``: ``/api/v3`` on GHES), with the forge's headers.  Raises ``Undecided``."""
        headers = {"Accept": REST_ACCEPT, "X-GitHub-Api-Version": REST_API_VERSION}
        return self._exchange("GET", self._parts.path.rstrip("/") + path, None, token, headers)

    def _exchange(self, verb: str, path: str, data: bytes | None, token: str, extra: dict[str, str]) -> LiteAnswer:
        headers = {"Authorization": f"Bearer {token}", **extra, "User-Agent": self._agent}
        try:
            conn, target = self._connection(headers, path)
            try:
                conn.request(verb, target, body=data, headers=headers)
                resp = conn.getresponse()
                text = resp.read().decode("utf-8", "replace")
                return LiteAnswer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, text)
            finally:
                conn.close()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise Undecided(f"the request failed: {type(exc).__name__}") from None

    def _connection(self, headers: dict[str, str], path: str) -> tuple[http.client.HTTPConnection, str]:
        parts = self._parts
        if not self._proxy:
            return self._direct(parts.hostname or "", parts.port), path
        proxy = urlsplit(self._proxy)
        auth = {}
        if proxy.username is not None:
            pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
            auth["Proxy-Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        if proxy.scheme != "http" or not proxy.hostname:  # TLS to the proxy itself: the full path's
            raise Undecided("the proxy is not an http:// URL with a host")
        proxy_port = proxy.port or 80
        if parts.scheme == "http":  # a plain request in proxy form
            headers.update(auth)
            origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
            return http.client.HTTPConnection(proxy.hostname, proxy_port, timeout=self._timeout_s), origin + path
        conn = http.client.HTTPSConnection(proxy.hostname, proxy_port, timeout=self._timeout_s, context=self._context)
        conn.set_tunnel(parts.hostname or "", parts.port or 443, headers=auth)
        return conn, path

    def _direct(self, host: str, port: int | None) -> http.client.HTTPConnection:
        if self._parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=self._timeout_s, context=self._context)
        return http.client.HTTPConnection(host, port, timeout=self._timeout_s)


def concurrently(*calls: Callable[[], T], wake: threading.Event | None = None) -> list[T]:
    """Run every call on its own thread at once and wait for all; returns their results in order.

    ``wake`` is set when the last call returns; whoever sets it earlier (a signal handler) ends
    the wait, and this raises ``Undecided``.  Otherwise raises the first call's exception.
    """
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)
    done = wake or threading.Event()
    left = [len(calls)]
    lock = threading.Lock()

    def worker(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # handed to the caller
            errors[i] = exc
        with lock:
            left[0] -= 1
            if left[0] == 0:
                done.set()

    for i in range(len(calls)):
        threading.Thread(target=worker, args=(i,), name=f"fast-skip-{i}", daemon=True).start()
    done.wait()
    with lock:
        if left[0]:
            raise Undecided("stopped before every answer came")
    for error in errors:
        if error is not None:
            raise error
    return results
