"""Issue 33: the fast skip's GraphQL client reads the environment as requests does, and answers
as strictly as the pydantic records (docs/architecture.md "Fast skip").

requests itself is the oracle for the proxy rule; ``fullsend.adapters.github.graphql`` for the
answers; a forwarding proxy on 127.0.0.1 for the wire.
"""

from __future__ import annotations

import copy
import http.client
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
import requests.utils

from fullsend.adapters.github import graphql, lite, lite_answers
from fullsend.errors import ForgeError

URLS = [
    "https://api.github.com/graphql",
    "http://127.0.0.1:8080/graphql",
    "https://ghes.corp.example/api/graphql",
    "https://10.1.2.3/api/graphql",
    "https://ghes.corp.example:8443/api/graphql",
]
ENVS: list[dict[str, str]] = [
    {},
    {"HTTPS_PROXY": "http://proxy.example:3128"},
    {"https_proxy": "http://lower.example:1", "HTTPS_PROXY": "http://upper.example:2"},
    {"HTTP_PROXY": "http://plain.example:8080"},
    {"ALL_PROXY": "http://all.example:9"},
    {"HTTPS_PROXY": "proxy.example:3128"},  # no scheme: requests reads http://
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "github.com"},
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "ithub.com"},  # requests' plain suffix rule
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": ".corp.example"},
    {"HTTPS_PROXY": "http://p.example:1", "no_proxy": "10.0.0.0/8"},
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "10.1.2.3"},
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "*"},
    {"HTTP_PROXY": "http://p.example:1", "NO_PROXY": "127.0.0.1, localhost"},
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "ghes.corp.example:8443"},
    {"HTTPS_PROXY": "http://p.example:1", "https_proxy": ""},  # an empty lower-case one removes it
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "GitHub.COM"},  # the standard library's rule, last
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": " * "},
    {"HTTPS_PROXY": "http://p.example:1", "NO_PROXY": "10.0.0.0/0,10.1.2.0/33,[::1]"},
]


def _requests_proxy(url: str) -> str:
    proxy = requests.utils.select_proxy(url, requests.utils.get_environ_proxies(url)) or ""
    return requests.utils.prepend_scheme_if_needed(proxy, "http") if proxy else ""


@pytest.mark.parametrize("env", ENVS)
def test_the_proxy_is_the_one_requests_would_use(monkeypatch, env):
    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for url in URLS:
        assert lite.proxy_for(url, env) == _requests_proxy(url), (url, env)


class _Forwarder(BaseHTTPRequestHandler):
    """A plain HTTP proxy: a request in proxy form is sent on to its host and answered back."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        target = urlsplit(self.path)
        type(self).seen.append(self.path)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection")}
        conn.request("POST", target.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def forwarder():
    _Forwarder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Forwarder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_requests_go_through_the_proxy_unless_no_proxy_names_the_host(forwarder):
    from fullsend.simulator.fixtures import JOB_TOKEN, standard_pr_scenario
    from fullsend.simulator.server import GitHubSimulator

    with GitHubSimulator() as sim:
        standard_pr_scenario(sim)
        body = lite.request_body(lite.VIEWER_QUERY, None)
        via = lite.LiteClient(sim.graphql_url, {"HTTP_PROXY": forwarder}).post(JOB_TOKEN, body)
        direct = lite.LiteClient(sim.graphql_url, {"HTTP_PROXY": forwarder, "NO_PROXY": "127.0.0.1"}).post(
            JOB_TOKEN, body
        )
    assert via.status == direct.status == 200 and via.text == direct.text
    assert lite_answers.viewer_login(lite_answers.envelope_data(via, "viewer"), "viewer") == "github-actions"
    assert _Forwarder.seen == [sim.graphql_url]  # the proxy saw the first request only


def test_a_dead_proxy_is_undecided_not_an_exception():
    client = lite.LiteClient("https://api.github.com/graphql", {"HTTPS_PROXY": "http://127.0.0.1:9"}, timeout_s=5)
    with pytest.raises(lite.Undecided, match="the request failed"):
        client.post("ghs_x", lite.request_body(lite.VIEWER_QUERY, None))


VALID_PAGE: dict[str, Any] = {
    "viewer": {"login": "github-actions"},
    "repository": {
        "issueOrPullRequest": {
            "comments": {
                "pageInfo": {"hasNextPage": True, "endCursor": "Y3Vyc29y"},
                "nodes": [
                    {
                        "fullDatabaseId": "2001",
                        "body": "<!-- fullsend:receipt -->\u202e x",
                        "createdAt": "2026-09-25T10:00:00Z",
                        "updatedAt": "2026-09-25T10:00:01Z",
                        "lastEditedAt": None,
                        "url": "https://github.example/c/1",
                        "author": {"__typename": "Bot", "login": "github-actions"},
                    },
                    {
                        "fullDatabaseId": "2002",
                        "body": "hi",
                        "createdAt": "2026-09-25T10:00:00.5+02:00",
                        "updatedAt": "2026-09-25T10:00:00Z",
                        "lastEditedAt": "2026-09-25T10:01:00Z",
                        "url": "u",
                        "author": None,
                    },
                    {
                        "fullDatabaseId": "2003",
                        "body": "",
                        "createdAt": "2026-09-25T10:00:00Z",
                        "updatedAt": "2026-09-25T10:00:00Z",
                        "lastEditedAt": None,
                        "url": "u",
                        "author": {"__typename": "User", "login": None},
                    },
                ],
            }
        }
    },
}
BAD_VALUES: list[Any] = [None, "x", 5, True, [], {}, "", "0", "2026-09-25", "12345678901234567", "1\n", -1]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += _paths(inner, (*path, i))
    return found


def _mutated(path: tuple[Any, ...], replacement: Any, drop: bool) -> dict[str, Any]:
    data = copy.deepcopy(VALID_PAGE)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return data


def _outcomes(data: Any) -> tuple[Any, Any]:
    try:
        strict = graphql.receipt_page(data, "view")
    except ForgeError:
        strict = "refused"
    try:
        plain = lite_answers.receipt_page(data, "view")
    except lite.Undecided:
        plain = "refused"
    return strict, plain


def test_every_answer_the_lite_reader_accepts_reads_as_the_pydantic_records_read_it():
    strict, plain = _outcomes(VALID_PAGE)
    assert strict != "refused" and plain == strict
    cases = 0
    for path in _paths(VALID_PAGE):
        for drop, value in [(True, None), *((False, v) for v in BAD_VALUES)]:
            strict, plain = _outcomes(_mutated(path, value, drop))
            assert plain == "refused" or plain == strict, (path, drop, value)
            cases += 1
    assert cases > 300


def test_a_rate_limited_or_failed_answer_is_undecided():
    ok = '{"data": {"viewer": {"login": "a"}}}'
    assert lite_answers.envelope_data(lite.LiteAnswer(200, {}, ok), "v") == {"viewer": {"login": "a"}}
    for answer in (
        lite.LiteAnswer(502, {}, ok),
        lite.LiteAnswer(200, {}, "<html>"),
        lite.LiteAnswer(200, {}, '{"errors": [{"type": "RATE_LIMITED", "message": "slow"}]}'),
        lite.LiteAnswer(200, {}, '{"data": null}'),
        lite.LiteAnswer(200, {}, '{"errors": {}}'),
    ):
        with pytest.raises(lite.Undecided):
            lite_answers.envelope_data(answer, "v")


def test_a_sibling_client_loads_the_ca_bundle_once(tmp_path) -> None:
    """The fast skip's REST client is a sibling of its GraphQL client: the CA bundle is loaded
    once (tens of ms), so removing the file after the first load does not matter to the sibling."""
    import certifi

    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    env = {"REQUESTS_CA_BUNDLE": str(bundle)}
    client = lite.LiteClient("https://ghes.corp.example/api/graphql", env)
    bundle.unlink()
    client.sibling("https://ghes.corp.example/api/v3")  # no second load: no error
    with pytest.raises(OSError):
        lite.LiteClient("https://ghes.corp.example/api/v3", env)  # a fresh client loads it again
