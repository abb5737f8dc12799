"""PyGithub 2.10 reads the simulator under a GHES prefix without tripping its own-base-URL
assertion: Link pages, followed ``url``s, conditional requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from github import Auth, Github

from fullsend.simulator.fixtures import add_follow_up_run, standard_pr_scenario

T0 = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)


def _github(sim: Any, token: str) -> Github:
    return Github(
        base_url=sim.api_url,
        auth=Auth.Token(token),
        per_page=100,
        retry=None,
        seconds_between_requests=0,
        seconds_between_writes=0,
        lazy=True,
    )


def test_pygithub_pages_runs_and_reads_a_run_under_api_v3(new_sim: Any) -> None:
    with new_sim(prefix="/api/v3", repository_links=True) as sim:
        fix = standard_pr_scenario(sim)
        for i in range(250):
            add_follow_up_run(sim, pull_requests=(7,), created_at=T0 + timedelta(seconds=i + 1))
        g = _github(sim, fix.job_token)
        repo = g.get_repo("org/repo")
        runs = list(repo.get_workflow_runs(created=">=2026-09-03T10:00:00Z"))
        assert len(runs) == 251 and len({r.id for r in runs}) == 251
        assert sim.request_count("GET", r"/runs$") == 3  # three Link pages, no hidden completion GETs
        run = repo.get_workflow_run(fix.my_run_id)
        assert (run.display_title, run.run_attempt, run.path) == ("org/repo#7", 1, ".github/workflows/fullsend.yml")
        assert [j.name for j in run.jobs()] == ["dispatch / Route", "dispatch / Review"]


def test_pygithub_request_json_gets_304_and_posts_one_comment(new_sim: Any) -> None:
    with new_sim(prefix="/api/v3") as sim:
        fix = standard_pr_scenario(sim)
        g = _github(sim, fix.role_token)
        path = "/repos/org/repo/issues/7/comments"
        status, headers, _ = g.requester.requestJson("GET", path)
        assert status == 200
        status, _, body = g.requester.requestJson("GET", path, headers={"If-None-Match": headers["etag"]})
        assert (status, body) == (304, "")
        comment = g.get_repo("org/repo").get_issue(7).create_comment("hello")
        assert comment.user.login == "fullsend-ai-review[bot]"
        assert sim.request_count("POST") == 1
