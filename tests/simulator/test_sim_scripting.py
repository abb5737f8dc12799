"""Time-scripting (``on_request``, ``at``), tokens → identities,
comment POST/PATCH, reviews, issue vs pull request and compare."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator

R = "/repos/org/repo"


def test_FIX_on_request_adds_comment_and_follow_up_after_my_jobs_are_read(sim: GitHubSimulator, gh: Any) -> None:
    fix = standard_pr_scenario(sim)
    added: list[tuple[dict, dict]] = []
    sim.on_request(
        sim.match("GET", rf"/actions/runs/{fix.my_run_id}/jobs$"),
        lambda s: added.append(add_comment_follow_up(s, "/fs-review please re-check the migration")),
    )
    listing = f"{R}/actions/workflows/fullsend.yml/runs?created=%3E%3D2026-09-03T10%3A00%3A00Z"
    assert gh.get(listing).json()["total_count"] == 1  # only my run yet
    jobs = gh.get(f"{R}/actions/runs/{fix.my_run_id}/jobs").json()
    assert [j["name"] for j in jobs["jobs"]] == ["dispatch / Route", "dispatch / Review"]  # answered before the action
    gh.get(f"{R}/actions/runs/{fix.my_run_id}/jobs")  # once: no second action
    assert len(added) == 1
    comment, run = added[0]
    runs = gh.get(listing).json()["workflow_runs"]
    assert [r["id"] for r in runs] == [run["id"], fix.my_run_id]
    assert runs[0]["display_title"] == f"org/repo#7 comment:{comment['id']}"
    assert [c["body"] for c in gh.get(f"{R}/issues/7/comments").json()] == ["/fs-review please re-check the migration"]


def test_on_request_repeating_and_predicate_on_status(sim: GitHubSimulator, gh: Any) -> None:
    hits: list[int] = []
    sim.on_request(sim.match(status=404), lambda s: hits.append(len(s.requests)), once=False)
    gh.get(f"{R}/issues/1")
    gh.get(f"{R}/issues/2")
    assert hits == [1, 2]


def test_at_runs_after_start_on_a_timer(new_sim: Any) -> None:
    done = threading.Event()
    sim = new_sim()
    sim.at(0.05, lambda s: (s.add_issue(3, title="late"), done.set()))
    with sim:
        assert done.wait(timeout=10)
        assert sim.get_issue(3)["title"] == "late"


def test_errors_in_scripted_actions_surface_at_exit(new_sim: Any, client: Any) -> None:
    with pytest.raises(KeyError), new_sim() as sim:
        sim.on_request(sim.match("GET"), lambda s: s.update_issue(404))
        client(sim).get(f"{R}/issues/1")


def test_token_identity_is_recorded_and_unknown_tokens_get_401(sim: GitHubSimulator, client: Any) -> None:
    sim.add_issue(7)
    assert client(sim).get(f"{R}/issues/7").status_code == 200
    bad = client(sim, "ghs_nope").get(f"{R}/issues/7")
    assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
    bare = client(sim).session.get(sim.api_url + f"{R}/issues/7", headers={"Authorization": ""}, timeout=10)
    assert bare.status_code == 401
    legacy = client(sim).session.get(
        sim.api_url + f"{R}/issues/7", headers={"Authorization": "token gho_user_token_for_tests"}, timeout=10
    )
    assert legacy.status_code == 200
    assert [(r.token, r.login, r.status) for r in sim.requests] == [
        ("ghs_app_token_for_tests", "fullsend-ai-review[bot]", 200),
        ("ghs_nope", "", 401),
        ("", "", 401),
        ("gho_user_token_for_tests", "alice", 200),
    ]


def test_who_am_i_chain_user_app_graphql(sim: GitHubSimulator, client: Any) -> None:
    sim.add_token("ghs_job", "github-actions", "Bot")  # an App login without suffix gets [bot] in REST
    app = client(sim, "ghs_job")
    denied = app.get("/user")
    assert denied.status_code == 403 and denied.json()["message"] == "Resource not accessible by integration"
    assert app.get("/app").status_code == 401
    viewer = app.session.post(sim.graphql_url, json={"query": "query { viewer { login } }"}, timeout=10)
    assert viewer.json() == {"data": {"viewer": {"login": "github-actions"}}}
    human = client(sim, "gho_user_token_for_tests").get("/user").json()
    assert (human["login"], human["type"]) == ("alice", "User")
    sim.add_issue(7)
    posted = app.post(f"{R}/issues/7/comments", json={"body": "x"}).json()
    assert (posted["user"]["login"], posted["user"]["type"], posted["user"]["id"]) == (
        "github-actions[bot]",
        "Bot",
        41898282,
    )


def test_comment_post_and_patch(new_sim: Any, client: Any) -> None:
    now = [datetime(2026, 9, 3, 10, 30, tzinfo=UTC)]
    with new_sim(clock=lambda: now[0]) as sim:
        sim.add_issue(7)
        gh = client(sim)
        created = gh.post(f"{R}/issues/7/comments", json={"body": "<!-- fullsend:steer consumed=1 head= -->"})
        c = created.json()
        assert created.status_code == 201 and created.headers["Location"] == c["url"]
        assert c["created_at"] == c["updated_at"] == "2026-09-03T10:30:00Z"
        assert c["html_url"] == f"http://127.0.0.1:{sim.api_url.split(':')[2]}/org/repo/issues/7#issuecomment-{c['id']}"
        assert sim.comments(7) == [c]
        assert sim.requests[-1].json() == {"body": "<!-- fullsend:steer consumed=1 head= -->"}
        now[0] += timedelta(minutes=5)
        edited = gh.patch(f"{R}/issues/comments/{c['id']}", json={"body": "edited"}).json()
        assert (edited["body"], edited["created_at"], edited["updated_at"]) == (
            "edited",
            "2026-09-03T10:30:00Z",
            "2026-09-03T10:35:00Z",
        )
        assert gh.post(f"{R}/issues/7/comments", json={}).status_code == 422
        assert gh.post(f"{R}/issues/8/comments", json={"body": "x"}).status_code == 404
        sim.delete_comment(c["id"])
        assert gh.patch(f"{R}/issues/comments/{c['id']}", json={"body": "y"}).status_code == 404
        assert gh.get(f"{R}/issues/7/comments").json() == []
        later = gh.post(f"{R}/issues/7/comments", json={"body": "later"}).json()
        assert later["id"] == c["id"] + 1  # a deleted comment's id is never given again
        assert gh.patch(f"{R}/issues/comments/{c['id']}", json={"body": "y"}).status_code == 404


def test_scripted_comment_times_are_kept_verbatim(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_issue(7)
    c = sim.add_comment(
        7, "r", "github-actions[bot]", created_at="2026-09-25T10:00:00Z", updated_at="2026-09-25T10:05:00Z"
    )  # an edited receipt
    got = gh.get(f"{R}/issues/7/comments").json()[0]
    assert (got["created_at"], got["updated_at"], got["user"]["type"]) == (
        "2026-09-25T10:00:00Z",
        "2026-09-25T10:05:00Z",
        "Bot",
    )
    assert sim.edit_comment(c["id"], "r2")["updated_at"] == "2026-09-03T10:30:00Z"


def test_issue_is_not_a_pull_request(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_issue(12, title="bug", labels=["bug"])
    sim.add_pull_request(7, "aaa111", title="pr", labels=["review"])
    assert gh.get(f"{R}/pulls/12").status_code == 404
    assert gh.get(f"{R}/pulls/12/reviews").status_code == 404
    assert "pull_request" not in gh.get(f"{R}/issues/12").json()
    assert gh.get(f"{R}/issues/7").json()["pull_request"]["url"] == f"{sim.api_url}{R}/pulls/7"
    assert gh.get(f"{R}/pulls/7").json()["head"]["sha"] == "aaa111"
    sim.update_issue(7, title="renamed", labels=["review", "urgent"])
    assert [lab["name"] for lab in gh.get(f"{R}/pulls/7").json()["labels"]] == ["review", "urgent"]
    assert gh.get(f"{R}/pulls/7").json()["title"] == "renamed"


def test_reviews_in_order_pending_has_no_submitted_at(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_pull_request(7, "aaa111")
    sim.add_review(7, "org-review[bot]", "APPROVED", submitted_at="2026-09-23T16:30:00Z")
    sim.add_review(7, "alice", "PENDING", commit_id="old000")
    got = gh.get(f"{R}/pulls/7/reviews", params={"per_page": 100, "page": 1}).json()
    assert [(r["user"]["login"], r["user"]["type"], r["state"], r["commit_id"]) for r in got] == [
        ("org-review[bot]", "Bot", "APPROVED", "aaa111"),
        ("alice", "User", "PENDING", "old000"),
    ]
    assert got[0]["submitted_at"] == "2026-09-23T16:30:00Z" and "submitted_at" not in got[1]


def test_move_head_and_compare_answers(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_pull_request(7, "aaa111")
    sim.move_head(7, "bbb222", files=[{"filename": "a.py", "additions": 2, "deletions": 1, "patch": "@@ a"}])
    sim.move_head(7, "ccc333", files=[{"filename": "a.py", "patch": "@@ a2"}, {"filename": "b.png"}], ahead_by=2)
    assert gh.get(f"{R}/pulls/7").json()["head"]["sha"] == "ccc333"
    one = gh.get(f"{R}/compare/aaa111...bbb222", params={"per_page": 1}).json()
    assert (one["status"], one["ahead_by"], one["behind_by"], len(one["commits"])) == ("ahead", 1, 0, 1)
    assert [(f["filename"], f["changes"], f["patch"]) for f in one["files"]] == [("a.py", 3, "@@ a")]
    both = gh.get(f"{R}/compare/aaa111...ccc333").json()
    assert (both["ahead_by"], both["commits"][-1]["sha"]) == (3, "ccc333")
    assert [(f["filename"], f.get("patch")) for f in both["files"]] == [("a.py", "@@ a2"), ("b.png", None)]
    assert gh.get(f"{R}/compare/ccc333...aaa111").json()["status"] == "behind"
    assert gh.get(f"{R}/compare/bbb222...bbb222").json()["status"] == "identical"
    assert gh.get(f"{R}/compare/zzz999...ccc333").status_code == 404
    sim.move_head(7, "fff666", files=[{"filename": "c.py"}], status="diverged", behind_by=2)
    diverged = gh.get(f"{R}/compare/ccc333...fff666").json()
    assert (diverged["status"], diverged["behind_by"]) == ("diverged", 2)
    sim.set_compare("ccc333", "fff666", 404)  # force-push: the old head is gone
    assert gh.get(f"{R}/compare/ccc333...fff666").status_code == 404
    sim.set_compare(
        "x1", "y2", {"status": "ahead", "ahead_by": 5, "files": [{"filename": f"f{i}"} for i in range(301)]}
    )
    big = gh.get(f"{R}/compare/x1...y2").json()
    assert (big["ahead_by"], len(big["files"])) == (5, 300)  # GitHub lists at most 300 files
