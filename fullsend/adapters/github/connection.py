"""One HTTP stack for the GitHub adapter: REST and GraphQL over the same ``requests`` sessions.

:class:`Connections` is one forge's connection pool (docs/architecture.md "GitHub access"): one
``requests.Session`` per thread (a session is not shared across threads), serving the REST
transport and the GraphQL client of every credential alike, so a poll's REST pages and its
GraphQL query ride one kept-alive connection.  The token travels in each request's
``Authorization`` header, never in the session.

The environment is read once, when the pool is made (and a URL's proxy on its first request),
never per request: ``trust_env`` is off, so requests consults neither ``~/.netrc`` (which would
replace the Bearer header) nor the environment on each send, and the settings requests would
have taken from it are passed explicitly — the proxy of ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
``ALL_PROXY`` unless ``NO_PROXY`` names the host (requests' own rule), the CA bundle of
``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE``.  Redirects are never followed here, and the
adapter's ``max_retries`` stays requests' 0: every repeat is the caller's decision.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit

import requests
import requests.utils

from fullsend import __version__

USER_AGENT = f"fullsend-steer-action/{__version__}"  # GitHub requires one on every request


class Connections:
    """A pool of per-thread sessions.  ``environ`` (default ``os.environ``, read here once)
    gives the CA bundle; proxies are resolved once per scheme, host and port."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._verify: bool | str = env.get("REQUESTS_CA_BUNDLE") or env.get("CURL_CA_BUNDLE") or True
        self._proxies: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    def session(self) -> requests.Session:
        """This thread's session (made on its first request)."""
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False  # the environment was read once, in __init__ / proxies_for
            session.headers["User-Agent"] = USER_AGENT
            self._local.session = session
        return session

    def proxies_for(self, url: str) -> dict[str, str]:
        """The proxies requests would take from the environment for ``url`` (``{}`` when
        ``NO_PROXY`` names its host), resolved on the first request to its origin."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        with self._lock:
            if origin not in self._proxies:
                self._proxies[origin] = dict(requests.utils.get_environ_proxies(origin + "/"))
            return self._proxies[origin]

    def send(
        self, verb: str, url: str, headers: Mapping[str, str], data: str | None, timeout_s: float
    ) -> requests.Response:
        """One HTTP exchange, body read whole; raises what requests raises (``RequestException``,
        ``OSError``).  ``timeout_s`` bounds the connection and every read, in seconds."""
        return self.session().request(
            verb,
            url,
            headers=dict(headers),
            data=data.encode("utf-8") if data is not None else None,
            timeout=timeout_s,
            proxies=self.proxies_for(url),
            verify=self._verify,
            allow_redirects=False,
        )
