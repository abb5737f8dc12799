"""``fullsend explain`` as a command: read-only, loud when a read fails, ``--as-of``, GHES base URLs,
exit codes (docs/architecture.md "Commands"; GraphQL ``viewer``)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pytest

from fullsend.core.identity import Identity
from fullsend.simulator.fixtures import (
    FIX_RUN_ID,
    StandardScenario,
    add_comment_follow_up,
    add_follow_up_run,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.support.explain_command import READER_LOGIN, command, comment_of, explain_json, run_explain, run_of

RULE_BRACKET = re.compile(r"\[[a-z][a-z0-9-]*\]")


def test_never_posts_anything(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """Every request is a GET, or the GraphQL viewer query an installation token resolves through."""
    sim.add_token("ghs_reader_installation", "reader-app", "Bot")
    add_comment_follow_up(sim, "/fs-review please re-check")
    add_follow_up_run(sim, route="failure")

    doc = explain_json(sim, env={"GH_TOKEN": "ghs_reader_installation", "GITHUB_GRAPHQL_URL": sim.graphql_url})

    assert doc["reader"] == "reader-app[bot]"
    methods = {(r.method, r.path) for r in sim.requests if r.method != "GET"}
    assert methods == {("POST", "/graphql")}
    assert len(sim.comments(7)) == 1  # only the comment the test added


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (
            ("status", r"/actions/runs$", 403),
            "403 Resource not accessible by integration (missing permission: the "
            "token may not read this (actions: read)",
        ),
        (("status", r"/actions/runs$", 401), "the token was refused"),
        (("status", r"/issues/7/comments$", 404), "not found, or the token cannot see the repository"),
        (("status", r"/actions/runs$", 502), "GitHub did not answer usefully"),
        (("truncate", r"/issues/7/comments$", 200), "GitHub did not answer usefully"),
    ],
    ids=["403", "401", "404", "502", "cut-answer"],
)
def test_a_read_that_fails_ends_the_command_with_one_line_and_no_verdict(
    sim: GitHubSimulator, fix: StandardScenario, fault: tuple[str, str, int], said: str
) -> None:
    """No report built on a failed read: exit 1, one line on stderr naming the read and its cause."""
    mode, path, status = fault
    if mode == "status":
        sim.fail(
            "GET",
            path,
            status,
            times=None,
            body={"message": "Resource not accessible by integration" if status == 403 else "nope"},
        )
    else:
        sim.fail_connection("GET", path, mode, times=None)
    sim.add_comment(7, "looks fine to me", "reviewer")

    proc = run_explain(sim)

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("fullsend explain: could not read GET /repos/org/repo/")
    assert said in line and "no verdict is printed" in line


def test_an_unreachable_api_fails_at_the_first_read() -> None:
    """Nothing listens on the port: the first read fails, and the command says so first and exits 1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again when the block ends: nothing listens there
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "fullsend", "explain", "https://github.com/org/repo/pull/7"],
        env={**base, "GH_TOKEN": "gho_x", "GITHUB_API_URL": f"http://127.0.0.1:{port}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines()[0].startswith(
        f"fullsend explain: could not read GET /repos/org/repo/issues/7 at http://127.0.0.1:{port}: "
    )


def test_as_of_ignores_later_runs_comments_and_reviews(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """Runs, comments and reviews created after TIME are left out; an edit after TIME still shows."""
    early, early_run = command(sim, "/fs-review first", "2026-09-03T10:04:00Z", "2026-09-03T10:04:02Z")
    sim.edit_comment(early["id"], "/fs-review first, edited", updated_at="2026-09-03T10:40:00Z")
    command(sim, "/fs-review second", "2026-09-03T10:30:00Z", "2026-09-03T10:30:02Z")
    sim.add_review(7, "someone", "COMMENTED", "later", submitted_at="2026-09-03T10:31:00Z")

    doc = explain_json(sim, "--as-of", "2026-09-03T10:10:00Z")

    assert doc["as_of"] == "2026-09-03T10:10:00Z"
    assert [r["run_id"] for r in doc["follow_ups"]] == [early_run["id"]]
    assert [c["comment_id"] for c in doc["comments"]] == [early["id"]]
    assert comment_of(doc, early["id"])["edited"] is True
    assert run_of(doc, early_run["id"])["unbound"] is True  # edited after its run: context


def test_ghes_base_urls() -> None:
    """With GITHUB_API_URL at ``/api/v3`` the GraphQL endpoint is derived as ``/api/graphql``."""
    with GitHubSimulator(prefix="/api/v3", tokens={"ghs_ghes_reader": Identity("ghes-reader[bot]")}) as ghes:
        fix = standard_pr_scenario(ghes)
        ghes.update_issue(7, created_at="2026-09-03T09:00:00Z")

        doc = explain_json(ghes, env={"GH_TOKEN": "ghs_ghes_reader"}, url="https://ghes.example/org/repo/pull/7")

        assert doc["in_flight"]["run_id"] == fix.my_run_id == FIX_RUN_ID
        assert doc["reader"] == "ghes-reader[bot]"
        assert ghes.request_count("POST", r"^/graphql$") == 1


def test_GITHUB_TOKEN_is_the_fallback_token(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """With GH_TOKEN unset, GITHUB_TOKEN is read."""
    doc = explain_json(sim, env={"GH_TOKEN": "", "GITHUB_TOKEN": "gho_explain_reader_token"})
    assert doc["reader"] == READER_LOGIN


def test_bad_arguments_exit_2(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """No token, a bad URL, a bad ``--as-of`` and a bad ``--run`` exit 2 before any request."""
    cases = [
        (run_explain(sim, env={"GH_TOKEN": ""}), "GH_TOKEN or GITHUB_TOKEN"),
        (run_explain(sim, url="https://github.com/org/repo"), "issue or pull request"),
        (run_explain(sim, "--as-of", "yesterday"), "RFC 3339"),
        (run_explain(sim, "--run", "abc"), "--run"),
    ]
    for proc, said in cases:
        assert proc.returncode == 2 and said in proc.stderr and proc.stdout == ""
    assert sim.requests == []


def test_hostile_numbers_exit_2_with_the_range_and_no_traceback(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A 5,000-digit run id or item number is refused by its range before any request; the
    error quotes at most a cut of the value."""
    digits = "9" * 5000
    cases = [
        (
            run_explain(sim, "--run", digits),
            f"--run must be a workflow run id (a number from 1 to 9223372036854775807), got '{'9' * 40}…'",
        ),
        (run_explain(sim, "--run", "9223372036854775808"), "a number from 1 to 9223372036854775807"),
        (run_explain(sim, url=f"https://github.com/org/repo/pull/{digits}"), "<n> from 1 to 2147483647"),
        (run_explain(sim, url="https://github.com/org/repo/issues/2147483648"), "<n> from 1 to 2147483647"),
    ]
    for proc, said in cases:
        assert proc.returncode == 2 and said in proc.stderr and proc.stdout == "", proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr) < 400
    assert sim.requests == []


def test_every_decision_line_carries_its_rule_id(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """Verdict, skip and own-output lines of the text report name the rule id in brackets."""
    add_follow_up_run(sim, route="failure")
    add_follow_up_run(sim, pr=8)
    sim.add_comment(7, "<!-- fullsend:agent-status:1 -->\nStarted", "fullsend-ai-review[bot]")

    text = run_explain(sim).stdout

    decision = [
        ln
        for ln in text.splitlines()
        if "verdict: reject" in ln
        or "verdict: pending" in ln
        or "would skip" in ln
        or "does not apply" in ln
        or ": own-output" in ln
    ]
    assert len(decision) >= 7
    assert all(RULE_BRACKET.search(ln) for ln in decision), decision


# --- issue 15: an item that does not exist; the shipped scenario -----------------------------------


def test_an_item_that_does_not_exist_exits_2_with_one_line(sim: GitHubSimulator, fix: StandardScenario) -> None:
    proc = run_explain(sim, url="https://github.com/org/repo/pull/99")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"fullsend explain: org/repo#99 does not exist at {sim.api_url}, or the token cannot see "
        "the repository (GitHub answered 404 for it); check the URL "
        "'https://github.com/org/repo/pull/99' and that GH_TOKEN or GITHUB_TOKEN can read the "
        "repository\n"
    )


def test_the_shipped_scenario_has_its_run_in_flight() -> None:
    """``fullsend simulator serve --scenario examples/scenarios/review-steer.yml`` announces run
    33740015232 in flight; explain finds it there (the pull request predates the run)."""
    from pathlib import Path

    from fullsend.app.commands.simulator import start_simulator
    from fullsend.simulator.fixtures import JOB_TOKEN
    from fullsend.simulator.scenario import load_scenario

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "review-steer.yml")
    served = start_simulator(scenario, 0, lambda line: None)
    try:
        proc = run_explain(served.sim, env={"GH_TOKEN": JOB_TOKEN}, url=f"{served.web_url}/org/repo/pull/7")
    finally:
        served.sim.stop()
    assert proc.returncode == 0, proc.stderr
    assert f"Run in flight: run {FIX_RUN_ID} · issue_comment by reviewer" in proc.stdout
    assert "No run of org/repo#7 is in flight" not in proc.stdout
