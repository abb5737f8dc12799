"""Issue 43 through the whole action (entrypoint subprocess, runner env, GitHub simulator) with
the scripted ``codex app-server``: a turn the CLI calls ``completed`` that is not outright
success fails the run, posts no receipt, and the queued run does its work (docs/runtimes.md
"Codex")."""

from __future__ import annotations

import json

import pytest

from fullsend.simulator.server import GitHubSimulator
from tests.app.steered_run import assert_no_receipt, errors, run_with_follow_up, steered

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
