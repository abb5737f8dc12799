"""One HTTP stack for the GitHub adapter: REST and GraphQL over one urllib3 connection pool.

:class:`Connections` is one forge's connection pool (docs/architecture.md "GitHub access"): one
thread-safe ``urllib3`` pool manager per proxy (most runs: one, direct), serving the REST
transport and the GraphQL client of every credential alike, so a poll's REST pages and its
GraphQL query ride one kept-alive connection.  The token travels in each request's
``Authorization`` header, never in the pool.  urllib3 is the layer ``requests`` itself sends
through; going to it directly leaves out the per-request work requests adds on top (preparing
and merging settings, cookie jars, hooks), which was most of a 304 poll's CPU.

The environment is read once, when the pool is made (and a URL's proxy on its first request),
never per request, with requests' rules: the proxy of ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
``ALL_PROXY`` unless ``NO_PROXY`` names the host, the CA bundle of ``REQUESTS_CA_BUNDLE`` /
``CURL_CA_BUNDLE`` (a file or a directory), else certifi's.  ``~/.netrc`` is never read.
Redirects are never followed here and nothing is retried: every repeat is the caller's decision.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import requests.utils
import urllib3

from fullsend import __version__

USER_AGENT = f"fullsend-steer-action/{__version__}"  # GitHub requires one on every request
_ACCEPT_ENCODING = "gzip, deflate"


@dataclass(frozen=True)
class HttpAnswer:
    """One HTTP answer, body read whole: ``status``, ``headers`` (as sent), ``text`` (UTF-8)."""

    status: int
    headers: Mapping[str, str]
    text: str


class Connections:
    """A thread-safe pool.  ``environ`` (default ``os.environ``, read here once) gives the CA
    bundle; proxies are resolved once per scheme, host and port."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._verify: bool | str = env.get("REQUESTS_CA_BUNDLE") or env.get("CURL_CA_BUNDLE") or True
        self._proxies: dict[str, str] = {}  # origin -> its proxy URL ("" = direct)
        self._managers: dict[str, urllib3.PoolManager] = {}  # proxy URL ("" = direct) -> its pool
        self._lock = threading.Lock()

    def proxy_for(self, url: str) -> str:
        """The proxy requests would take from the environment for ``url`` (``""`` when none, or
        when ``NO_PROXY`` names its host), resolved on the first request to its origin."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        with self._lock:
            if origin not in self._proxies:
                proxies = requests.utils.get_environ_proxies(origin + "/")
                self._proxies[origin] = requests.utils.select_proxy(origin + "/", proxies) or ""
            return self._proxies[origin]

    def _manager(self, proxy: str) -> urllib3.PoolManager:
        with self._lock:
            manager = self._managers.get(proxy)
            if manager is None:
                manager = self._new_manager(proxy)
                self._managers[proxy] = manager
            return manager

    def _new_manager(self, proxy: str) -> urllib3.PoolManager:
        ca = certifi.where() if self._verify is True else str(self._verify)
        ca_dir, ca_file = (ca, None) if os.path.isdir(ca) else (None, ca)
        if not proxy:
            return urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca_file, ca_cert_dir=ca_dir)
        parsed = urllib3.util.parse_url(proxy)
        headers = urllib3.make_headers(proxy_basic_auth=parsed.auth) if parsed.auth else None
        return urllib3.ProxyManager(
            proxy, proxy_headers=headers, cert_reqs="CERT_REQUIRED", ca_certs=ca_file, ca_cert_dir=ca_dir
        )

    def send(self, verb: str, url: str, headers: Mapping[str, str], data: str | None, timeout_s: float) -> HttpAnswer:
        """One HTTP exchange, body read whole; raises what urllib3 raises (``HTTPError``,
        ``OSError``).  ``timeout_s`` bounds the connection and every read, in seconds."""
        sent = {"User-Agent": USER_AGENT, "Accept-Encoding": _ACCEPT_ENCODING, **headers}
        resp = self._manager(self.proxy_for(url)).request(
            verb,
            url,
            headers=sent,
            body=data.encode("utf-8") if data is not None else None,
            timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s),
            retries=False,
            redirect=False,
        )
        return HttpAnswer(resp.status, resp.headers, resp.data.decode("utf-8", errors="replace"))
