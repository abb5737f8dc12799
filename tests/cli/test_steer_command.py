"""``python -m fullsend steer …`` as a subprocess against the GitHub simulator
(docs/architecture.md "Commands"): the comment it posts, the requests it
makes, the token order, GHES paths and its exit codes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fullsend.simulator.server import GitHubSimulator

USER_TOKEN = "gho_steering_user_token"
READ_ONLY_TOKEN = "gho_read_only_user_token"
PR, ISSUE, MISSING = 7, 12, 99
HEAD = "a" * 40
WEB = "https://github.com/org/repo"


def populate(sim: GitHubSimulator) -> GitHubSimulator:
    sim.add_token(USER_TOKEN, "octocat", "User")
    sim.add_token(READ_ONLY_TOKEN, "viewer", "User", read_only=True)
    sim.add_pull_request(PR, HEAD, title="Add the migration")
    sim.add_issue(ISSUE, title="Crash on start")
    return sim


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    with populate(GitHubSimulator()) as server:
        yield server


def steer(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    base["PATH"] = env.pop("PATH", "/nonexistent")  # no real gh: the token comes from the test
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "steer", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def api_env(sim: GitHubSimulator, token: str = USER_TOKEN) -> dict[str, str]:
    return {"GITHUB_API_URL": sim.api_url, "GH_TOKEN": token}


def posted(sim: GitHubSimulator, number: int) -> list[tuple[str, str]]:
    return [(c["body"], c["user"]["login"]) for c in sim.comments(number)]


# --- what is posted --------------------------------------------------------------------------


def test_V165_pr_url_posts_fs_review(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/pull/{PR}", "head moved; re-check", env=api_env(sim))
    assert proc.returncode == 0, proc.stderr
    assert posted(sim, PR) == [("/fs-review head moved; re-check", "octocat")]
    (comment,) = sim.comments(PR)
    assert proc.stdout.strip().endswith(comment["html_url"])
    # the URL said "pull request": one POST, no lookup
    assert [(r.method, r.path) for r in sim.requests] == [("POST", f"/repos/org/repo/issues/{PR}/comments")]
    assert sim.requests[0].headers["authorization"] == f"Bearer {USER_TOKEN}"
    assert USER_TOKEN not in proc.stdout + proc.stderr


def test_V166_issue_url_posts_fs_triage(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/issues/{ISSUE}", "  the logs say it is the config  ", env=api_env(sim))
    assert proc.returncode == 0, proc.stderr
    assert posted(sim, ISSUE) == [("/fs-triage the logs say it is the config", "octocat")]


def test_V167_pr_with_stage_fix(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/pull/{PR}/files", "rebase onto main", "--stage", "fix", env=api_env(sim))
    assert proc.returncode == 0, proc.stderr
    assert posted(sim, PR) == [("/fs-fix rebase onto main", "octocat")]


def test_issues_url_of_a_pull_request_is_resolved_by_the_api(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/issues/{PR}", "check the index", env=api_env(sim))
    assert proc.returncode == 0, proc.stderr
    assert posted(sim, PR) == [("/fs-review check the index", "octocat")]
    assert [(r.method, r.path) for r in sim.requests] == [
        ("GET", f"/repos/org/repo/issues/{PR}"),
        ("POST", f"/repos/org/repo/issues/{PR}/comments"),
    ]


def test_triage_on_issues_url_needs_no_lookup(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/issues/{ISSUE}", "re-label", "--stage", "triage", env=api_env(sim))
    assert proc.returncode == 0, proc.stderr
    assert [r.method for r in sim.requests] == ["POST"]


def test_ghes_api_base_from_the_url() -> None:
    with populate(GitHubSimulator(prefix="/api/v3")) as ghes:
        web = ghes.api_url[: -len("/api/v3")]
        proc = steer(f"{web}/org/repo/pull/{PR}", "look again", env={"GH_TOKEN": USER_TOKEN})
        assert proc.returncode == 0, proc.stderr
        assert posted(ghes, PR) == [("/fs-review look again", "octocat")]
        assert ghes.requests[0].raw_path.startswith("/api/v3/repos/org/repo/issues/")


# --- token sources ---------------------------------------------------------------------------


def test_github_token_when_gh_token_unset(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/pull/{PR}", "x", env={"GITHUB_API_URL": sim.api_url, "GITHUB_TOKEN": USER_TOKEN})
    assert proc.returncode == 0, proc.stderr
    assert sim.requests[0].login == "octocat"


def test_gh_auth_token_last(sim: GitHubSimulator, tmp_path: Path) -> None:
    gh = tmp_path / "gh"
    gh.write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'auth token' ] && echo {USER_TOKEN}\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    proc = steer(f"{WEB}/pull/{PR}", "x", env={"GITHUB_API_URL": sim.api_url, "PATH": f"{tmp_path}:/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert sim.requests[0].login == "octocat"
    assert USER_TOKEN not in proc.stdout + proc.stderr


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vid", "args", "message"),
    [
        ("V168", (f"{WEB}/pull/{PR}", "x", "--stage", "bogus"), '--stage must be review, fix or triage, got "bogus"'),
        (
            "V169",
            (f"{WEB}/issues/{ISSUE}", "x", "--stage", "code"),
            '--stage must be review, fix or triage, got "code": ',
        ),
        ("V170", (f"{WEB}/pull/{PR}", "   "), "the steer text is empty; say what the agent should do differently"),
        ("bad-url", ("https://github.com/org/repo", "x"), "does not name an issue or pull request"),
        ("gitlab", ("https://gitlab.com/g/p/-/merge_requests/3", "x"), "not supported on GitLab"),
    ],
)
def test_bad_input_exits_2_before_any_request(sim: GitHubSimulator, vid: str, args: tuple, message: str) -> None:
    proc = steer(*args, env=api_env(sim))
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stdout == ""
    assert sim.requests == []


def test_V168_fix_on_an_issue_exits_2_without_posting(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/issues/{ISSUE}", "x", "--stage", "fix", env=api_env(sim))
    assert proc.returncode == 2
    assert "--stage fix applies to a pull request, and this is an issue" in proc.stderr
    assert sim.request_count("POST") == 0 and posted(sim, ISSUE) == []


def test_missing_token_exits_2(sim: GitHubSimulator) -> None:
    proc = steer(f"{WEB}/pull/{PR}", "x", env={"GITHUB_API_URL": sim.api_url})
    assert proc.returncode == 2
    assert "no GitHub token" in proc.stderr and "GH_TOKEN" in proc.stderr
    assert sim.requests == []


@pytest.mark.parametrize(
    ("vid", "token", "url", "status_text"),
    [
        ("write-forbidden", READ_ONLY_TOKEN, f"{WEB}/pull/{PR}", "403"),
        ("bad-credentials", "gho_unknown", f"{WEB}/pull/{PR}", "401"),
        ("no-such-pull", USER_TOKEN, f"{WEB}/pull/{MISSING}", "404"),
        ("no-such-issue", USER_TOKEN, f"{WEB}/issues/{MISSING}", "not found"),
    ],
)
def test_api_failures_exit_1(sim: GitHubSimulator, vid: str, token: str, url: str, status_text: str) -> None:
    proc = steer(url, "x", env=api_env(sim, token))
    assert proc.returncode == 1
    assert status_text in proc.stderr
    assert token not in proc.stdout + proc.stderr
    assert posted(sim, PR) == [] and posted(sim, ISSUE) == []


def test_a_post_answered_with_a_list_was_still_posted(sim: GitHubSimulator) -> None:
    """Issue 18: a 201 whose answer is not a comment is "posted, URL unknown", not a failure."""
    from fullsend.simulator.faults import replace_body

    sim.mutate("POST", rf"/issues/{PR}/comments$", replace_body([]))
    proc = steer(f"{WEB}/pull/{PR}", "head moved; re-check", env=api_env(sim))
    assert proc.returncode == 0, proc.stderr
    assert posted(sim, PR) == [("/fs-review head moved; re-check", "octocat")]
    assert "GitHub's answer did not say where" in proc.stdout


@pytest.mark.parametrize("fault", ["post-502", "post-cut", "unreachable"])
def test_a_lost_answer_exits_1_with_one_line_and_no_traceback(sim: GitHubSimulator, fault: str) -> None:
    """When GitHub's answer to the post is lost, the comment may exist: the one line says so,
    names the item and what to check before running steer again; an unreachable API fails at
    the first read, posting nothing."""
    env = api_env(sim)
    if fault == "post-502":
        sim.fail("POST", rf"/issues/{PR}/comments$", 502)
    elif fault == "post-cut":
        sim.fail_connection("POST", rf"/issues/{PR}/comments$", "truncate")
    else:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            env["GITHUB_API_URL"] = f"http://127.0.0.1:{probe.getsockname()[1]}"
    proc = steer(f"{WEB}/pull/{PR}", "head moved; re-check", env=env)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fullsend steer: could not "), proc.stderr
    assert "Traceback" not in proc.stderr and USER_TOKEN not in proc.stdout + proc.stderr
    if fault == "unreachable":
        assert "may have been posted" not in lines[0] and posted(sim, PR) == []
        return
    assert lines[0].endswith(
        "it may have been posted all the same: look at org/repo#7 before you run fullsend steer again"
    )
    assert len(posted(sim, PR)) == (1 if fault == "post-cut" else 0)  # a cut answer: GitHub did post it
