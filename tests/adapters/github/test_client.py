"""The one HTTP client (docs/architecture.md "GitHub access"): the proxy and CA read from the
environment once, a forwarding proxy on the wire, any host reachable (an OIDC issuer's keys),
requests sent at once, and failures that say whether anything was sent."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest

from fullsend.adapters.github.client import Client, SendFailed, at_once, environ_proxies, select_proxy

GITHUB, LOOPBACK = "https://api.github.com/graphql", "http://127.0.0.1:8080/graphql"
GHES, GHES_IP, GHES_PORT = (
    "https://ghes.corp.example/api/graphql",
    "https://10.1.2.3/api/graphql",
    "https://ghes.corp.example:8443/api/graphql",
)
URLS = (GITHUB, LOOPBACK, GHES, GHES_IP, GHES_PORT)
P = "http://p.example:1"
#: (environment, the proxy of each of URLS): the standard library's rules, and CIDR blocks.
PROXY_TABLE: list[tuple[dict[str, str], tuple[str, ...]]] = [
    ({}, ("", "", "", "", "")),
    (
        {"HTTPS_PROXY": "http://proxy.example:3128"},
        ("http://proxy.example:3128", "", *["http://proxy.example:3128"] * 3),
    ),
    (
        {"https_proxy": "http://lower.example:1", "HTTPS_PROXY": "http://upper.example:2"},
        ("http://lower.example:1", "", *["http://lower.example:1"] * 3),
    ),
    ({"HTTP_PROXY": "http://plain.example:8080"}, ("", "http://plain.example:8080", "", "", "")),
    ({"ALL_PROXY": "http://all.example:9"}, ("http://all.example:9",) * 5),
    ({"HTTPS_PROXY": "proxy.example:3128"}, ("http://proxy.example:3128", "", *["http://proxy.example:3128"] * 3)),
    ({"HTTPS_PROXY": P, "NO_PROXY": "github.com"}, ("", "", P, P, P)),
    ({"HTTPS_PROXY": P, "NO_PROXY": "ithub.com"}, (P, "", P, P, P)),  # a domain, not a plain suffix
    ({"HTTPS_PROXY": P, "NO_PROXY": ".corp.example"}, (P, "", "", P, "")),
    ({"HTTPS_PROXY": P, "no_proxy": "10.0.0.0/8"}, (P, "", P, "", P)),
    ({"HTTPS_PROXY": P, "NO_PROXY": "10.1.2.3"}, (P, "", P, "", P)),
    ({"HTTPS_PROXY": P, "NO_PROXY": "*"}, ("", "", "", "", "")),
    ({"HTTP_PROXY": P, "NO_PROXY": "127.0.0.1, localhost"}, ("", "", "", "", "")),
    ({"HTTPS_PROXY": P, "NO_PROXY": "ghes.corp.example:8443"}, (P, "", P, P, "")),
    ({"HTTPS_PROXY": P, "https_proxy": ""}, ("", "", "", "", "")),  # an empty lower-case one removes it
    ({"HTTPS_PROXY": P, "NO_PROXY": "GitHub.COM"}, ("", "", P, P, P)),  # names without case
    ({"HTTPS_PROXY": P, "NO_PROXY": " * "}, (P, "", P, P, P)),  # "*" only alone
    ({"HTTPS_PROXY": P, "NO_PROXY": "10.1.2.0/33,[::1],10.1.2.0/24"}, (P, "", P, "", P)),  # a bad block is skipped
]


@pytest.mark.parametrize(("env", "expected"), PROXY_TABLE)
def test_the_proxy_of_each_url_follows_the_environment(env: dict[str, str], expected: tuple[str, ...]) -> None:
    assert tuple(select_proxy(url, environ_proxies(env)) for url in URLS) == expected


def test_the_environment_is_read_once_when_the_client_is_made() -> None:
    env = {"REQUESTS_CA_BUNDLE": "/nonexistent/ca.pem", "HTTPS_PROXY": P}
    client = Client(env)
    env.clear()
    assert client._ca == "/nonexistent/ca.pem" and client.proxy_for(GITHUB) == P
    assert Client({"CURL_CA_BUNDLE": "/etc/ca"})._ca == "/etc/ca" and Client({})._ca == ""


class _Server(BaseHTTPRequestHandler):
    """A loopback host that is not GitHub's: answers ``/keys`` with a JWKS-like document and, as
    a forwarding proxy, sends a request in proxy form on to its host."""

    seen: ClassVar[list[str]] = []
    gate: ClassVar[threading.Barrier] = threading.Barrier(3, timeout=10)

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        if self.path.startswith("http://"):
            target = urlsplit(self.path)
            conn = http.client.HTTPConnection(target.hostname or "", target.port, timeout=10)
            conn.request("GET", target.path)
            resp = conn.getresponse()
            status, data = resp.status, resp.read()
        elif self.path == "/slow":
            time.sleep(0.3)
            status, data = 200, b"{}"
        elif self.path == "/gate":  # answered once three requests are in flight together
            try:
                type(self).gate.wait()
                status, data = 200, b"{}"
            except threading.BrokenBarrierError:
                status, data = 504, b"{}"
        else:
            status, data = 200, json.dumps({"keys": [{"kid": "1"}], "agent": self.headers["User-Agent"]}).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Server.seen, _Server.gate = [], threading.Barrier(3, timeout=10)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_any_host_is_reachable_with_the_actions_user_agent(server: str) -> None:
    answer = Client({}).get(server + "/keys")
    assert answer.status == 200 and json.loads(answer.text)["keys"] == [{"kid": "1"}]
    assert json.loads(answer.text)["agent"].startswith("fullsend-steer-action/")
    assert answer.headers["content-length"] == str(len(answer.text))  # names lower-cased


def test_a_request_goes_through_the_proxy_unless_no_proxy_names_the_host(server: str) -> None:
    via = Client({"HTTP_PROXY": server}).get("http://localhost:" + server.rsplit(":", 1)[1] + "/keys")
    direct = Client({"HTTP_PROXY": server, "NO_PROXY": "localhost"}).get(
        "http://localhost:" + server.rsplit(":", 1)[1] + "/keys"
    )
    assert via.status == direct.status == 200 and json.loads(via.text)["keys"] == json.loads(direct.text)["keys"]
    assert _Server.seen == ["http://localhost:" + server.rsplit(":", 1)[1] + "/keys", "/keys", "/keys"]


def test_a_refused_connection_says_nothing_was_sent() -> None:
    with pytest.raises(SendFailed) as failed:
        Client({}).send("POST", "http://127.0.0.1:9/graphql", {}, "{}", timeout_s=5)
    assert failed.value.never_connected


def test_a_read_timeout_fails_after_the_connection_was_made(server: str) -> None:
    with pytest.raises(SendFailed) as failed:
        Client({}, timeout_s=0.05).get(server + "/slow")
    assert not failed.value.never_connected


def test_requests_sent_at_once_overlap_and_keep_their_order(server: str) -> None:
    client = Client({})  # one pool: a request in flight does not hold back the next
    answers = at_once(*[lambda: client.get(server + "/gate")] * 3, lambda: client.get(server + "/keys"))
    assert [a.status for a in answers] == [200] * 4 and "keys" in answers[3].text


def test_a_wake_up_ends_the_wait_before_every_answer() -> None:
    wake, release = threading.Event(), threading.Event()
    wake.set()
    with pytest.raises(InterruptedError):
        at_once(lambda: release.wait(5), wake=wake)
    release.set()
    assert at_once() == []
