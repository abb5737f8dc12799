"""Issue 43 through the whole action (entrypoint subprocess, runner env, GitHub simulator) with
the scripted ``codex app-server``: a turn the CLI calls ``completed`` that is not outright
success fails the run, posts no receipt, and the queued run does its work (docs/runtimes.md
"Codex")."""

from __future__ import annotations

import json

import pytest

from fullsend.simulator.server import GitHubSimulator
from tests.support.steered_run import assert_no_receipt, errors, run_with_follow_up, steered

APP_SERVER = {"runtime": "codex", "codex_transport": "app-server"}


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def test_a_completed_turn_that_carries_an_error_posts_no_receipt(sim, tmp_path):
    patch = {"error": {"message": "the model stream ended early", "codexErrorInfo": None}}
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_AGENT_RESULT": json.dumps(patch)}
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, APP_SERVER, agent_env)
    assert steered(run) and run.outputs["steers"] == "1", run.stdout
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert errors(run) == [
        "::error::The run failed: the codex turn carried an error and still said completed "
        "(completed with turn.error): the model stream ended early [agent-error]"
    ]


def test_a_sub_agent_still_working_at_the_end_of_the_wait_posts_no_receipt(sim, tmp_path):
    """The turn that took the steer spawned a sub-agent and completed without it (openai/codex#36141);
    the run holds the app-server's input open for it, up to delegated_wait_seconds, and it is
    still working then: no receipt."""
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_APP_SERVER_SPAWN": "120:completed"}
    inputs = {**APP_SERVER, "delegated_wait_seconds": "2"}
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, inputs, agent_env)
    assert steered(run) and run.outputs["steers"] == "1", run.stdout
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    [error] = errors(run)
    assert error.startswith("::error::The run failed: work the agent delegated did not finish: sub-agent ")
    assert error.endswith('("Check the docs (sub-agent-marker).") still running [delegated-unfinished]')


def test_a_sub_agent_that_completes_within_the_wait_keeps_the_receipt(sim, tmp_path):
    """The success path changes only by waiting: the sub-agent completes 3 s after the turn, within
    the wait, and the run posts its receipt."""
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_APP_SERVER_SPAWN": "3:completed"}
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, APP_SERVER, agent_env)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (run.outputs["outcome"], run.outputs["consumed_run_ids"]) == ("succeeded", str(follow_up["id"]))
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] != []


PUSH = "/bin/bash -lc 'git push origin main'"


def test_an_approval_codex_asked_for_and_was_refused_posts_no_receipt(sim, tmp_path):
    """The run is unattended: an approval request gets an error answer, a refused tool; with no
    expected_denials line for it the turn is not success (docs/rules.md#tool-refused)."""
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_APP_SERVER_APPROVAL": PUSH}
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, APP_SERVER, agent_env)
    assert steered(run) and run.outputs["steers"] == "1", run.stdout
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert errors(run) == [
        "::error::The run failed: the agent was refused a tool that expected_denials does not list: shell [tool-refused]"
    ]


def test_a_refusal_expected_denials_covers_keeps_the_receipt(sim, tmp_path):
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_APP_SERVER_DECLINE": PUSH}
    inputs = {**APP_SERVER, "expected_denials": "shell(git push)"}
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, inputs, agent_env)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (run.outputs["outcome"], run.outputs["consumed_run_ids"]) == ("succeeded", str(follow_up["id"]))
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] != []
    assert "The agent was refused the tool shell" in run.stdout  # listed, and changes nothing
