"""Issue 43 through the whole action (entrypoint subprocess, runner env, GitHub simulator) with
the scripted pi: the steer is delivered mid-cycle and the cycle settles without answering it.
The answer that came before the steer used to make the run a success with a receipt; now the
cycle is judged after its last delivered steer: no receipt, the queued run does its work."""

from __future__ import annotations

import pytest

from fullsend.simulator.server import GitHubSimulator
from tests.support.steered_run import assert_no_receipt, errors, run_with_follow_up, steered


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def test_a_steer_pi_took_in_and_never_answered_posts_no_receipt(sim, tmp_path):
    agent_env = {"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_PI_SILENT_AFTER_STEER": "1"}
    fix, follow_up, run = run_with_follow_up(sim, tmp_path, {"runtime": "pi"}, agent_env)
    assert steered(run) and run.outputs["steers"] == "1", run.stdout
    assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    assert errors(run) == [
        "::error::The run failed: the agent settled without answering the last input it took in (no_answer) "
        "[turn-unjudged]"
    ]
