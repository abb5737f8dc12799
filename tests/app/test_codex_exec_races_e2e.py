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

import pytest

from fullsend.adapters.runtimes.codex.exec.loop import STOPPED_FOR_STEER_NOTE, THREAD_LOST_NOTE
from fullsend.simulator.server import GitHubSimulator
from tests.support.steered_run import assert_no_receipt, errors, run_with_follow_up, steered

EXEC = {"runtime": "codex", "codex_transport": "exec"}


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def test_a_follow_up_after_turn_failed_leaves_the_failed_turn_standing(sim, tmp_path):
    flag = tmp_path / "terminal.flag"
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_FIRST_RESULT": json.dumps({"type": "turn.failed", "error": {"message": "usage limit hit"}}),
        "SCRIPTED_CODEX_FIRST_LINGER_S": "8",
        "SCRIPTED_CODEX_TERMINAL_FLAG": str(flag),
    }
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, EXEC, agent_env, after=flag)
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert STOPPED_FOR_STEER_NOTE not in run.stdout
    assert errors(run) == [
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
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, EXEC, agent_env)
    assert steered(run), "the steer never reached the agent"
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert errors(run) == [
        "::error::The run failed: codex reported an error during the turn and still said completed "
        "(turn.completed after error): stream disconnected before completion; retrying 1/5 [agent-error]"
    ]


def test_a_resume_into_another_thread_is_a_lost_session(sim, tmp_path):
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "6",
        "SCRIPTED_CODEX_RESUME_TURN_S": "5",
        "SCRIPTED_CODEX_RESUME_THREAD_ID": "new",
    }
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, EXEC, agent_env)
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert run.outputs["steers"] == "0"
    assert THREAD_LOST_NOTE in run.stdout
    assert errors(run) == [
        "::error::The run failed: the agent session was lost during a steer interrupt; the queued run will redo "
        "the update [session-lost]"
    ]


def test_a_sub_agent_the_resume_left_behind_fails_the_run(sim, tmp_path):
    """The resume spawns a sub-agent and completes without waiting for it: codex exec ends it
    with the process (openai/codex#36141), so the update is not receipted."""
    child = "01a24a0d-7ba0-71d3-a662-50c4cdfba0d9"
    spawn = {
        "id": "item_2",
        "type": "collab_tool_call",
        "tool": "spawn_agent",
        "sender_thread_id": "the-run's-thread",
        "receiver_thread_ids": [child],
        "prompt": "Re-check the migration.",
        "agents_states": {child: {"status": "pending_init", "message": None}},
        "status": "completed",
    }
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "6",
        "SCRIPTED_CODEX_RESUME_TURN_S": "0.2",
        "SCRIPTED_CODEX_RESUME_EVENTS": json.dumps([{"type": "item.completed", "item": spawn}]),
    }
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, EXEC, agent_env)
    assert steered(run) and run.outputs["steers"] == "1", run.stdout
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert errors(run) == [
        "::error::The run failed: work the agent delegated did not finish: "
        f'sub-agent {child} ("Re-check the migration.") still starting [delegated-unfinished]'
    ]


def test_a_command_codex_declined_in_the_resume_fails_the_run(sim, tmp_path):
    """A refused tool fails the turn unless expected_denials covers it (docs/rules.md#tool-refused)."""
    push = "/bin/bash -lc 'git push origin main'"
    declined = {"type": "command_execution", "id": "item_4", "command": push, "status": "declined"}
    agent_env = {
        "SCRIPTED_AGENT_TURN_S": "6",
        "SCRIPTED_CODEX_RESUME_TURN_S": "0.2",
        "SCRIPTED_CODEX_RESUME_EVENTS": json.dumps([{"type": "item.completed", "item": declined}]),
    }
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, EXEC, agent_env)
    assert steered(run) and run.outputs["steers"] == "1", run.stdout
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert errors(run) == [
        "::error::The run failed: the agent was refused a tool that expected_denials does not list: shell [tool-refused]"
    ]
    assert "The agent was refused the tool shell; to expect it, add the line shell to expected_denials" in run.stdout
