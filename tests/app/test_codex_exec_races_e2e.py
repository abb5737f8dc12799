"""Issue 43 through the whole action (entrypoint subprocess, runner env, GitHub simulator) with a
scripted ``codex exec``: three races of the exec transport that used to end ``succeeded`` with a
receipt the queued run skipped on.  Each now fails the run, posts no receipt, and the queued run
does its work (docs/runtimes.md "Codex").

- a follow-up arrives after the opening turn wrote ``turn.failed`` (a usage limit) and before its
  process exited: the failed turn is not relabelled "stopped for a steer";
- the resume writes ``error`` and then ``turn.completed``;
- the resume reports a thread that is not the run's own (a fresh thread without the task).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.adapters.runtimes.codex.exec.loop import STOPPED_FOR_STEER_NOTE, THREAD_LOST_NOTE
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


def _run(sim: GitHubSimulator, tmp_path: Path, agent_env: dict[str, str], after: Path | None = None):
    """The action with ``runtime: codex`` over exec; one follow-up comment arrives at a listing
    poll (once ``after`` exists, when given).  Returns (the scenario, the follow-up run, the run)."""
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added: dict = {}

    def follow_up(s: GitHubSimulator) -> None:
        if not added and (after is None or after.exists()):
            added["run"] = add_comment_follow_up(s, COMMAND)[1]

    sim.on_request(sim.match("GET", LISTING), follow_up, once=False)
    env = runner_env(tmp_path, sim, fix, inputs={"runtime": "codex", "codex_transport": "exec"})
    env.update(agent_env)
    run = run_entrypoint(env, tmp_path)
    assert added, "the follow-up never arrived: " + run.stdout
    return fix, added["run"], run


def _assert_no_receipt(sim: GitHubSimulator, fix, follow_up: dict, run: ActionRun, tmp_path: Path) -> None:
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["consumed_run_ids"] == "" and run.outputs["receipt_url"] == ""
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] == []
    assert not queued_run_skips(sim, fix, follow_up["id"], tmp_path), "the queued run must do its work"


def test_a_follow_up_after_turn_failed_leaves_the_failed_turn_standing(sim, tmp_path):
    flag = tmp_path / "terminal.flag"
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_FIRST_RESULT": json.dumps({"type": "turn.failed", "error": {"message": "usage limit hit"}}),
        "SCRIPTED_CODEX_FIRST_LINGER_S": "8",
        "SCRIPTED_CODEX_TERMINAL_FLAG": str(flag),
    }
    fix, follow_up, run = _run(sim, tmp_path, agent_env, after=flag)
    _assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert STOPPED_FOR_STEER_NOTE not in run.stdout
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors == [
        "::error::The run failed: codex reached a usage or context limit (turn.failed): usage limit hit [limit-reached]"
    ]


def test_error_then_turn_completed_in_the_resume_is_not_success(sim, tmp_path):
    error = {"type": "error", "message": "stream disconnected before completion; retrying 1/5"}
    reasoning = {"type": "item.completed", "item": {"id": "item_r", "type": "reasoning", "text": "Reading."}}
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "6",
        "SCRIPTED_CODEX_RESUME_TURN_S": "0.2",
        "SCRIPTED_CODEX_RESUME_EVENTS": json.dumps([reasoning, error]),
    }
    fix, follow_up, run = _run(sim, tmp_path, agent_env)
    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)], "the steer never reached the agent"
    _assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors == [
        "::error::The run failed: codex reported an error during the turn and still said completed "
        "(turn.completed after error): stream disconnected before completion; retrying 1/5 [agent-error]"
    ]


def test_a_resume_into_another_thread_is_a_lost_session(sim, tmp_path):
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "6",
        "SCRIPTED_CODEX_RESUME_TURN_S": "5",
        "SCRIPTED_CODEX_RESUME_THREAD_ID": "new",
    }
    fix, follow_up, run = _run(sim, tmp_path, agent_env)
    _assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert run.outputs["steers"] == "0"
    assert THREAD_LOST_NOTE in run.stdout
