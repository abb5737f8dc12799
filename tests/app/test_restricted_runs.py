"""Issue 21 D: fork pull requests and Dependabot runs (read-only job token, no secrets) do the work
and say once that receipts and the status comment are off, and why."""

from __future__ import annotations

import pytest

from fullsend.core.restricted import restricted_run
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env


def _pr_event(head_repo: str) -> dict:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {"number": 7, "head": {"sha": "aaa111", "repo": {"full_name": head_repo}}},
    }


@pytest.mark.parametrize(
    ("event_name", "event", "actor", "why"),
    [
        ("pull_request", _pr_event("someone/repo"), "someone", "a pull request from a fork"),
        ("pull_request", _pr_event("org/repo"), "someone", ""),
        ("pull_request", _pr_event("ORG/Repo"), "someone", ""),
        ("issue_comment", {"issue": {"number": 7}}, "someone", ""),
        ("pull_request", _pr_event("org/repo"), "dependabot[bot]", "a Dependabot run"),
        ("pull_request", {"pull_request": None}, "someone", ""),
    ],
)
def test_which_runs_are_restricted(event_name, event, actor, why):
    assert restricted_run(event_name, event, "org/repo", actor) == why


def test_a_fork_pull_request_does_the_work_without_status_comment_or_receipt(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(
            tmp_path,
            sim,
            fix,
            inputs={"role_token": "", "steer_enabled": "false"},
            event=_pr_event("someone/repo") | {"number": fix.pr},
        )
        env.update({"GITHUB_EVENT_NAME": "pull_request", "SCRIPTED_AGENT_TURN_S": "0.2"})
        run = run_entrypoint(env, tmp_path)
        comments = sim.comments(fix.pr)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded"
    assert run.agent_messages == ["Review the pull request."]
    notes = [line for line in run.stdout.splitlines() if "status comment" in line]
    assert notes == [
        "Receipts and the status comment are off: this is a pull request from a fork, which GitHub "
        "gives a read-only job token and no secrets; the work is done all the same"
    ]
    assert [c for c in comments if c["user"]["login"] in (fix.role_login, fix.job_login)] == []
