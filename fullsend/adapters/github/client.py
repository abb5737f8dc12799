"""The one HTTP client of the action: every request to GitHub, and to the hosts around it.

Every request the action sends goes through :class:`Client` (docs/architecture.md "GitHub
access"): REST and GraphQL under both credentials, the fast skip's reads (they are the forge's),
the role-token mint's OIDC request and exchange, and a plain GET to another host (an OIDC
issuer's keys).  ``tests/test_layers.py`` holds every other module of the package away from
``urllib3``, ``http.client``, ``requests`` and ``urllib.request`` (the one exception, the agent CLI
installer, never talks to GitHub: docs/architecture.md "Agent CLI").

* **One library**, urllib3: thread-safe pools with kept-alive connections, proxies with CONNECT,
  and gzip, at about 45 ms of CPU to import (``requests`` on top of it cost another 70 ms and a
  settings merge, a cookie jar and hooks per request: twice the CPU of a 304).
* **One pool per proxy** (most runs: one, direct) for every host and credential; the token
  travels in each request's ``Authorization`` header, never in the pool.
* **One reading of the environment**, when the client is made (a URL's proxy on its first
  request to that origin), never per request: the proxy of ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
  ``ALL_PROXY`` (either case; a lower-case name wins, as the standard library reads them) unless
  ``NO_PROXY`` names the host (the standard library's ``proxy_bypass_environment``: ``*``, a
  name or a parent domain, with or without the port; and an IPv4 host inside a CIDR block); the
  CA bundle of ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE`` (a file or a directory), else
  certifi's.  ``~/.netrc`` is never read.
* **Nothing repeated here**: no redirect followed, no retry.  The retry and rate-limit policy is
  ``fullsend.adapters.github.ratelimit`` (GitHub's API) and the mint's own bounded loop; a write
  is never sent twice behind the caller's back.

Failures are :class:`SendFailed`, saying whether a connection was ever made (a write in a
request that never connected did not happen).  No message carries a token or a header value.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import certifi
import urllib3
from urllib3.exceptions import HTTPError, NewConnectionError

from fullsend import __version__

USER_AGENT = f"fullsend-steer-action/{__version__}"  # GitHub requires one on every request
TIMEOUT_S = 15.0  # per connection and per read, unless the caller says otherwise
_ACCEPT_ENCODING = "gzip, deflate"
T = TypeVar("T")


@dataclass(frozen=True)
class HttpAnswer:
    """One HTTP answer, body read whole: ``status``, ``headers`` (names lower-cased), ``text`` (UTF-8)."""

    status: int
    headers: Mapping[str, str]
    text: str


class SendFailed(Exception):
    """No answer came: the connection failed or broke, or the answer could not be read.
    ``never_connected``: no connection was made, so nothing was sent."""

    def __init__(self, message: str, never_connected: bool = False) -> None:
        super().__init__(message)
        self.never_connected = never_connected


class Client:
    """The action's HTTP client.  Thread-safe: one instance serves every thread and credential.

    ``environ`` (default ``os.environ``) gives the proxies and the CA bundle; ``timeout_s`` the
    default bound of a connection and of every read, in seconds.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, timeout_s: float = TIMEOUT_S) -> None:
        env = os.environ if environ is None else environ
        self.timeout_s = timeout_s
        self._ca = env.get("REQUESTS_CA_BUNDLE") or env.get("CURL_CA_BUNDLE") or ""
        self._proxy_env = environ_proxies(env)
        self._proxies: dict[str, str] = {}  # origin -> its proxy URL ("" = direct)
        self._managers: dict[str, urllib3.PoolManager] = {}  # proxy URL ("" = direct) -> its pool
        self._lock = threading.Lock()

    def proxy_for(self, url: str) -> str:
        """The proxy ``url`` is sent through (``""``: direct), resolved once per origin."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        with self._lock:
            if origin not in self._proxies:
                self._proxies[origin] = select_proxy(url, self._proxy_env)
            return self._proxies[origin]

    def send(
        self,
        verb: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        data: str | bytes | None = None,
        timeout_s: float | None = None,
    ) -> HttpAnswer:
        """One HTTP exchange with any host, body read whole.  ``headers`` are added to
        ``User-Agent`` and ``Accept-Encoding``; a ``str`` body is sent as UTF-8.  Raises
        :class:`SendFailed` when no answer could be read."""
        sent = {"User-Agent": USER_AGENT, "Accept-Encoding": _ACCEPT_ENCODING, **(headers or {})}
        bound = self.timeout_s if timeout_s is None else timeout_s
        body = data.encode("utf-8") if isinstance(data, str) else data
        try:
            resp = self._manager(self.proxy_for(url)).request(
                verb,
                url,
                headers=sent,
                body=body,
                timeout=urllib3.Timeout(connect=bound, read=bound),
                retries=False,
                redirect=False,
            )
        except (HTTPError, OSError) as exc:
            raise SendFailed(f"{type(exc).__name__}", _never_connected(exc)) from None
        except ValueError as exc:  # a header or status line that could not be read
            raise SendFailed(f"the answer could not be read ({type(exc).__name__})") from None
        answer_headers = {name.lower(): value for name, value in resp.headers.items()}
        return HttpAnswer(resp.status, answer_headers, resp.data.decode("utf-8", errors="replace"))

    def get(self, url: str, headers: Mapping[str, str] | None = None) -> HttpAnswer:
        """``GET url`` on any host (an OIDC issuer's keys, a mint's): :meth:`send` without a body."""
        return self.send("GET", url, headers)

    def _manager(self, proxy: str) -> urllib3.PoolManager:
        with self._lock:
            manager = self._managers.get(proxy)
            if manager is None:
                manager = self._managers[proxy] = self._new_manager(proxy)
            return manager

    def _new_manager(self, proxy: str) -> urllib3.PoolManager:
        ca = self._ca or certifi.where()
        ca_dir, ca_file = (ca, None) if os.path.isdir(ca) else (None, ca)
        if not proxy:
            return urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca_file, ca_cert_dir=ca_dir)
        parsed = urllib3.util.parse_url(proxy)
        headers = urllib3.make_headers(proxy_basic_auth=parsed.auth) if parsed.auth else None
        return urllib3.ProxyManager(
            proxy, proxy_headers=headers, cert_reqs="CERT_REQUIRED", ca_certs=ca_file, ca_cert_dir=ca_dir
        )


def environ_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """``<scheme>_proxy`` variables of ``environ`` as the standard library's
    ``getproxies_environment`` reads ``os.environ``: scheme (``https``, ``all``, ``no`` …) -> value;
    a lower-case name wins over its upper-case twin, and an empty lower-case one removes it."""
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


def select_proxy(url: str, proxies: Mapping[str, str]) -> str:
    """The proxy for ``url`` under ``proxies`` (:func:`environ_proxies`), ``""`` when none or
    when ``NO_PROXY`` names its host; a proxy without a scheme is ``http://``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host or _bypassed(host, parts.port, proxies):
        return ""
    proxy = proxies.get(parts.scheme) or proxies.get("all") or ""
    return proxy if not proxy or "://" in proxy else "http://" + proxy


def _bypassed(host: str, port: int | None, proxies: Mapping[str, str]) -> bool:
    """The standard library's ``NO_PROXY`` rule, plus an IPv4 host inside a CIDR entry."""
    netloc = f"{host}:{port}" if port else host
    if urllib.request.proxy_bypass_environment(netloc, dict(proxies)):  # type: ignore[attr-defined]  # public, untyped in typeshed
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in proxies.get("no", "").replace(" ", "").split(","):
        if "/" in entry and address.version == 4:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
    return False


def _never_connected(exc: BaseException) -> bool:
    """True when the connection was never made (refused, no route, name unknown): nothing was sent."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (NewConnectionError, ConnectionRefusedError)):
            return True
        reason = getattr(current, "reason", None)
        nested = current.args[0] if current.args else None
        if isinstance(reason, BaseException):
            current = reason
        elif isinstance(nested, BaseException):
            current = nested
        else:
            current = current.__context__
    return False


def at_once(*calls: Callable[[], T], wake: threading.Event | None = None) -> list[T]:
    """Run every call on its own thread at once (requests sent together: one round trip) and
    wait for all; returns their results in order.

    ``wake`` is set when the last call returns; whoever sets it earlier (a signal handler) ends
    the wait and this raises ``InterruptedError``.  Otherwise raises the first call's exception.
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
        threading.Thread(target=worker, args=(i,), name=f"at-once-{i}", daemon=True).start()
    if calls:
        done.wait()
    with lock:
        if left[0]:
            raise InterruptedError("stopped before every answer came")
    for error in errors:
        if error is not None:
            raise error
    return results
