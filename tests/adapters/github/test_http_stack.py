"""One HTTP client for REST and GraphQL (docs/architecture.md "GitHub access"): one kept-alive
connection for both APIs and both credentials, GitHub's headers on every request,
the environment read once (proxies, CA bundle; never ``~/.netrc``), URLs joined under a GHES
prefix, a renamed repository's 301 followed on the API's own host only."""

from __future__ import annotations

import threading

import pytest

from fullsend import __version__
from fullsend.adapters.github.forge import GitHubForge
from fullsend.adapters.github.transport import API_VERSION, ApiBase, Transport, with_parameters
from fullsend.core.model import Repo
from fullsend.errors import ForgeError
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_TOKEN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.adapters.github.test_github_adapter import RecordingClock

PR = "/repos/org/repo/pulls/7"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        standard_pr_scenario(simulator)
        yield simulator


def _forge(sim: GitHubSimulator) -> GitHubForge:
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, RecordingClock())


def test_rest_and_graphql_of_both_tokens_share_one_kept_alive_connection(sim):
    """A poll's REST pages and its GraphQL query ride one kept-alive connection (one TLS
    handshake against GitHub); the pool is thread-safe, so a later thread reuses it too."""
    forge = _forge(sim)
    sim.reset_requests()
    forge.get_pull_request(7)  # REST, role token
    forge.viewer_login("job")  # GraphQL, job token
    forge.get_run(FIX_RUN_ID)  # REST, job token
    other = threading.Thread(target=forge.get_pull_request, args=(7,))
    other.start()
    other.join()
    assert [r.path for r in sim.requests][:2] == [PR, "/graphql"]
    ports = [r.client_port for r in sim.requests]
    assert len(ports) == 4 and ports[0] > 0
    assert ports[0] == ports[1] == ports[2] == ports[3]


def test_every_request_carries_github_s_headers(sim):
    forge = _forge(sim)
    sim.reset_requests()
    forge.get_pull_request(7)
    forge.viewer_login("job")
    rest, graphql = sim.requests
    agent = f"fullsend-steer-action/{__version__}"
    assert rest.headers["authorization"] == f"Bearer {ROLE_TOKEN}"
    assert rest.headers["x-github-api-version"] == API_VERSION == "2022-11-28"
    assert rest.headers["accept"] == "application/vnd.github+json"
    assert rest.headers["user-agent"] == graphql.headers["user-agent"] == agent
    assert graphql.headers["authorization"] == f"Bearer {JOB_TOKEN}"


def test_a_netrc_entry_never_replaces_the_bearer_token(sim, tmp_path, monkeypatch):
    """requests reads ``~/.netrc`` per request when it trusts the environment, and a Basic
    header from it would replace the token; the pool does not trust the environment per request."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password not-the-token\n", encoding="utf-8")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    forge = _forge(sim)
    sim.reset_requests()
    assert forge.viewer_login("job") == "github-actions[bot]"
    forge.get_pull_request(7)
    assert [r.headers["authorization"] for r in sim.requests] == [f"Bearer {JOB_TOKEN}", f"Bearer {ROLE_TOKEN}"]


def test_the_proxy_is_taken_from_the_environment_once(sim, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "")
    with pytest.raises(ForgeError, match="ProxyError"):
        _forge(sim).get_pull_request(7)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the host is exempt: straight to the simulator
    forge = _forge(sim)
    assert forge.get_pull_request(7).number == 7
    monkeypatch.setenv("NO_PROXY", "")  # read when the pool first sent there, not per request
    assert forge.get_pull_request(7).number == 7


def test_urls_are_joined_under_the_base_path_and_never_leave_its_host():
    base = ApiBase("https://ghes.example/api/v3/")
    assert base.url("/repos/o/r", {"per_page": 100}) == "https://ghes.example/api/v3/repos/o/r?per_page=100"
    # A Link page or a redirect: its path and query, on the base's host (the token stays there).
    assert (
        base.url("https://elsewhere.example:8443/api/v3/repositories/1/runs?page=2&per_page=100", None)
        == "https://ghes.example/api/v3/repositories/1/runs?page=2&per_page=100"
    )
    assert base.same_host("https://ghes.example/api/v3/repositories/1") and base.same_host("/api/v3/x")
    assert not base.same_host("https://elsewhere.example/api/v3/x") and not base.same_host("http://ghes.example/x")
    assert with_parameters("/x?b=2&a=1", {"b": 3, "c": True}) == "/x?a=1&b=3&c=true"
    assert with_parameters("/x", {"created": ">=2026-09-03T10:00:00Z"}) == "/x?created=%3E%3D2026-09-03T10%3A00%3A00Z"


def test_a_renamed_repository_s_301_is_followed_on_the_api_host(sim):
    sim.fail("GET", r"^/repos/org/old-name/pulls/7$", 301, headers={"Location": sim.api_url + PR})
    rest = Transport(sim.api_url, ROLE_TOKEN, RecordingClock(), timeout_s=5)
    sim.reset_requests()
    assert rest.request("GET", "/repos/org/old-name/pulls/7").data["number"] == 7
    assert [(r.path, r.status) for r in sim.requests] == [("/repos/org/old-name/pulls/7", 301), (PR, 200)]


def test_a_301_to_another_host_is_not_followed(sim):
    sim.fail("GET", r"^/repos/org/old-name/pulls/7$", 301, headers={"Location": "https://elsewhere.example" + PR})
    rest = Transport(sim.api_url, ROLE_TOKEN, RecordingClock(), timeout_s=5)
    with pytest.raises(ForgeError, match="301 to a host outside the API base") as err:
        rest.request("GET", "/repos/org/old-name/pulls/7")
    assert err.value.status == 301 and sim.request_count("GET") == 1
