"""Issue 43 through the whole action (entrypoint subprocess, runner env, GitHub simulator) with
the scripted ``codex app-server``: a turn the CLI calls ``completed`` that is not outright
success fails the run, posts no receipt, and the queued run does its work (docs/runtimes.md
"Codex")."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import ActionRun, run_entrypoint, runner_env
from tests.support.fault_harness import queued_run_skips

COMMAND = "/fs-review please re-check the migration"
LISTING = r"/actions/workflows/fullsend\.yml/runs"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _run(sim: GitHubSimulator, tmp_path: Path, agent_env: dict[str, str]):
    """The action with ``runtime: codex`` over the app-server; one follow-up comment arrives at
    the first listing poll.  Returns (the scenario, the follow-up run, the run)."""
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added: dict = {}
    sim.on_request(sim.match("GET", LISTING), lambda s: added.update(run=add_comment_follow_up(s, COMMAND)[1]))
    env = runner_env(tmp_path, sim, fix, inputs={"runtime": "codex", "codex_transport": "app-server"})
    env.update(agent_env)
    run = run_entrypoint(env, tmp_path)
    assert added, "the follow-up never arrived: " + run.stdout
    return fix, added["run"], run


def _assert_no_receipt(sim: GitHubSimulator, fix, follow_up: dict, run: ActionRun, tmp_path: Path) -> None:
    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)], "the steer never reached the agent"
    assert run.outputs["steers"] == "1", run.stdout
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["consumed_run_ids"] == "" and run.outputs["receipt_url"] == ""
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] == []
    assert not queued_run_skips(sim, fix, follow_up["id"], tmp_path), "the queued run must do its work"


def test_a_completed_turn_that_carries_an_error_posts_no_receipt(sim, tmp_path):
    patch = {"error": {"message": "the model stream ended early", "codexErrorInfo": None}}
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_AGENT_RESULT": json.dumps(patch)}
    fix, follow_up, run = _run(sim, tmp_path, agent_env)
    _assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors == [
        "::error::The run failed: the codex turn carried an error and still said completed "
        "(completed with turn.error): the model stream ended early [agent-error]"
    ]
