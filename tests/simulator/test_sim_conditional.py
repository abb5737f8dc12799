"""Conditional requests: ETag on every GET 200, ``If-None-Match`` → 304 without a body, counted apart
(docs/architecture.md "GitHub access"; issue 9 "conditional polling")."""

from __future__ import annotations

from typing import Any

from fullsend.simulator.server import GitHubSimulator

LIST = "/repos/org/repo/actions/workflows/fullsend.yml/runs?created=%3E%3D2026-09-03T10%3A00%3A00Z&per_page=100&page=1"


def test_etag_304_without_body_and_counted_apart(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_workflow_run(path=".github/workflows/fullsend.yml", created_at="2026-09-03T10:05:00Z")
    first = gh.get(LIST)
    tag = first.headers["ETag"]
    assert first.status_code == 200 and tag.startswith('"') and tag.endswith('"')
    again = gh.get(LIST, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == tag
    weak = gh.get(LIST, headers={"If-None-Match": f'"other", W/{tag}'})
    assert weak.status_code == 304
    assert [r.status for r in sim.requests] == [200, 304, 304]
    assert sim.request_count("GET", r"/runs$") == 3
    assert sim.request_count(status=304) == 2
    assert sim.counted_request_count() == 1
    assert again.headers["X-RateLimit-Used"] == first.headers["X-RateLimit-Used"] == "1"


def test_change_breaks_the_etag(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_workflow_run(path=".github/workflows/fullsend.yml", created_at="2026-09-03T10:05:00Z")
    tag = gh.get(LIST).headers["ETag"]
    sim.add_workflow_run(path=".github/workflows/fullsend.yml", created_at="2026-09-03T10:06:00Z")
    changed = gh.get(LIST, headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["ETag"] != tag
    assert changed.json()["total_count"] == 2


def test_issue_etag_moves_with_a_new_comment(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_issue(7, title="t")
    tag = gh.get("/repos/org/repo/issues/7").headers["ETag"]
    assert gh.get("/repos/org/repo/issues/7", headers={"If-None-Match": tag}).status_code == 304
    sim.add_comment(7, "hello", "reviewer", created_at="2026-09-03T10:40:00Z")
    response = gh.get("/repos/org/repo/issues/7", headers={"If-None-Match": tag})
    assert response.status_code == 200
    assert response.json()["comments"] == 1 and response.json()["updated_at"] == "2026-09-03T10:40:00Z"


def test_errors_and_writes_carry_no_etag(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_issue(7)
    assert "ETag" not in gh.get("/repos/org/repo/issues/8").headers
    assert "ETag" not in gh.post("/repos/org/repo/issues/7/comments", json={"body": "x"}).headers
