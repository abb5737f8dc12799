"""Fault injection (issue 9 starts here): status faults with headers/bodies, counts, and broken connections."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from fullsend.simulator.server import GitHubSimulator

ISSUE = "/repos/org/repo/issues/7"


@pytest.fixture
def item(sim: GitHubSimulator) -> GitHubSimulator:
    sim.add_issue(7, title="t")
    return sim


def test_status_fault_fires_times_then_passes(item: GitHubSimulator, gh: Any) -> None:
    item.fail("GET", r"/issues/7$", 502, times=2)
    assert [gh.get(ISSUE).status_code for _ in range(3)] == [502, 502, 200]
    assert [r.fault for r in item.requests] == ["status", "status", ""]
    assert gh.get(ISSUE + "/comments").status_code == 200  # other paths untouched


def test_fault_after_and_forever(item: GitHubSimulator, gh: Any) -> None:
    fault = item.fail("GET", r"/issues/7$", 503, times=None, after=1)
    assert [gh.get(ISSUE).status_code for _ in range(4)] == [200, 503, 503, 503]
    assert (fault.seen, fault.fired) == (4, 3)
    item.clear_faults()
    assert gh.get(ISSUE).status_code == 200


def test_rate_limit_faults_carry_their_headers(item: GitHubSimulator, gh: Any) -> None:
    item.fail("GET", r"/issues/7$", 429, headers={"Retry-After": "7"})
    item.fail(
        "GET",
        r"/issues/7$",
        403,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1788429600"},
        body={"message": "API rate limit exceeded for installation."},
        after=1,
    )
    first, second = gh.get(ISSUE), gh.get(ISSUE)
    assert (first.status_code, first.headers["Retry-After"], first.json()["message"]) == (
        429,
        "7",
        "API rate limit exceeded",
    )
    assert (second.status_code, second.headers["X-RateLimit-Remaining"]) == (403, "0")
    assert second.json() == {"message": "API rate limit exceeded for installation."}


def test_non_json_body_fault(item: GitHubSimulator, gh: Any) -> None:
    item.fail("GET", r"/issues/7$", 200, body="<html>unicorn</html>")
    response = gh.get(ISSUE)
    assert response.status_code == 200 and response.text == "<html>unicorn</html>"
    with pytest.raises(ValueError):
        response.json()


def test_post_fault_is_recorded_and_creates_nothing(item: GitHubSimulator, gh: Any) -> None:
    item.fail("POST", r"/issues/7/comments$", 502)
    assert gh.post(ISSUE + "/comments", json={"body": "x"}).status_code == 502
    assert item.comments(7) == []
    assert item.request_count("POST", r"/comments$", status=502) == 1


@pytest.mark.parametrize("mode,error", [("reset", requests.ConnectionError), ("truncate", requests.RequestException)])
def test_connection_faults(item: GitHubSimulator, gh: Any, mode: str, error: type[Exception]) -> None:
    item.fail_connection("GET", r"/issues/7$", mode)
    with pytest.raises(error):
        gh.get(ISSUE).json()
    assert gh.get(ISSUE).status_code == 200
    assert [r.fault for r in item.requests] == [mode, ""]


def test_hang_fault_times_the_client_out(item: GitHubSimulator, gh: Any) -> None:
    item.fail_connection("GET", r"/issues/7$", "hang", hang_s=5)
    with pytest.raises(requests.Timeout):
        gh.session.get(item.api_url + ISSUE, timeout=0.2)
    assert item.requests[0].status == 0


def test_unknown_connection_mode_is_refused(item: GitHubSimulator) -> None:
    with pytest.raises(ValueError):
        item.fail_connection("GET", r"/", "explode")
