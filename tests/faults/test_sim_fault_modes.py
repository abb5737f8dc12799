"""The simulator's fault injection (fullsend/simulator/faults.py): per endpoint, per request
number, per token login; truncated and mutated real answers; pages that shift between requests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from fullsend.core.identity import Identity
from fullsend.simulator.faults import drop_field, not_json
from fullsend.simulator.server import GitHubSimulator

JOB, ROLE = "ghs_fault-mode-job", "ghs_fault-mode-role"
ISSUE = "/repos/org/repo/issues/7"


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    tokens = {JOB: Identity("github-actions[bot]"), ROLE: Identity("fullsend-ai-review[bot]")}
    with GitHubSimulator(tokens=tokens) as simulator:
        simulator.add_issue(7, title="t")
        yield simulator


def _call(
    sim: GitHubSimulator, method: str, path: str, token: str = JOB, headers: dict[str, str] | None = None, **kw: object
) -> requests.Response:
    sent = {"Authorization": f"Bearer {token}", **(headers or {})}
    return requests.request(method, sim.api_url + path, headers=sent, timeout=5, **kw)  # type: ignore[arg-type]


def test_a_fault_can_target_one_token_login(sim: GitHubSimulator) -> None:
    sim.fail("POST", r"/issues/7/comments$", 403, times=None, login="github-actions[bot]")
    assert _call(sim, "POST", ISSUE + "/comments", ROLE, json={"body": "status"}).status_code == 201
    assert _call(sim, "POST", ISSUE + "/comments", JOB, json={"body": "receipt"}).status_code == 403
    assert [c["body"] for c in sim.comments(7)] == ["status"]


def test_per_request_number(sim: GitHubSimulator) -> None:
    fault = sim.fail("GET", r"/issues/7$", 503, times=2, after=1)
    assert [_call(sim, "GET", ISSUE).status_code for _ in range(4)] == [200, 503, 503, 200]
    assert (fault.seen, fault.fired) == (4, 2)


def test_truncate_cuts_the_real_answer_after_the_post_took_effect(sim: GitHubSimulator) -> None:
    sim.fail_connection("POST", r"/issues/7/comments$", "truncate")
    with pytest.raises(requests.RequestException):
        _call(sim, "POST", ISSUE + "/comments", json={"body": "receipt"})
    assert [c["body"] for c in sim.comments(7)] == ["receipt"]  # created, although the client saw an error
    assert sim.requests[0].status == 201 and sim.requests[0].fault == "truncate"


def test_truncate_ignores_if_none_match_so_a_body_is_always_cut(sim: GitHubSimulator) -> None:
    tag = _call(sim, "GET", ISSUE).headers["ETag"]
    sim.fail_connection("GET", r"/issues/7$", "truncate")
    with pytest.raises(requests.RequestException):
        _call(sim, "GET", ISSUE, headers={"If-None-Match": tag})
    assert _call(sim, "GET", ISSUE).status_code == 200


def test_drop_field_removes_a_key_from_every_listed_item(sim: GitHubSimulator) -> None:
    for _ in range(2):
        sim.add_workflow_run(path=".github/workflows/fullsend.yml")
    sim.mutate("GET", r"/runs$", drop_field("created_at"))
    first = _call(sim, "GET", "/repos/org/repo/actions/workflows/fullsend.yml/runs").json()
    again = _call(sim, "GET", "/repos/org/repo/actions/workflows/fullsend.yml/runs").json()
    assert first["total_count"] == 2 and all("created_at" not in r for r in first["workflow_runs"])
    assert all("created_at" in r for r in again["workflow_runs"])  # times=1


def test_not_json_replaces_the_body_of_a_processed_request(sim: GitHubSimulator) -> None:
    sim.mutate("POST", r"/issues/7/comments$", not_json(b"<html>unicorn</html>"))
    response = _call(sim, "POST", ISSUE + "/comments", json={"body": "receipt"})
    assert response.status_code == 201 and response.text == "<html>unicorn</html>"
    assert [c["body"] for c in sim.comments(7)] == ["receipt"]


def test_a_page_shifts_between_two_requests(sim: GitHubSimulator) -> None:
    for i in range(101):
        sim.add_comment(7, f"c{i}", "someone")
    first_id = sim.comments(7)[0]["id"]
    sim.on_request(sim.match("GET", r"/issues/7/comments$", page=1), lambda s: s.delete_comment(first_id))
    page1 = _call(sim, "GET", ISSUE + "/comments?per_page=100&page=1").json()
    page2 = _call(sim, "GET", ISSUE + "/comments?per_page=100&page=2").json()
    assert [c["body"] for c in page1][-1] == "c99" and page2 == []  # "c100" slid onto page 1: missed


def test_delete_job_shifts_the_job_listing(sim: GitHubSimulator) -> None:
    run = sim.add_workflow_run(path=".github/workflows/fullsend.yml")
    ids = [sim.add_job(run["id"], f"job {i}")["id"] for i in range(3)]
    sim.delete_job(ids[0])
    listed = _call(sim, "GET", f"/repos/org/repo/actions/runs/{run['id']}/jobs").json()
    assert listed["total_count"] == 2 and [j["name"] for j in listed["jobs"]] == ["job 1", "job 2"]


def test_an_unknown_mode_is_refused(sim: GitHubSimulator) -> None:
    with pytest.raises(ValueError):
        sim.fail_connection("GET", r"/", "status")
