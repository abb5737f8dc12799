"""Issue 27 acceptance: a receipt only on positive proof that the steered work finished.

Each case runs the whole action (entrypoint subprocess, runner env, GitHub simulator on
127.0.0.1) with the scripted Claude agent, after a follow-up run was steered in and
acknowledged, so that only the agent's end stands between the run and a receipt: a ``result``
that says success in ``subtype`` but not in ``stop_reason``; an invented ``stop_reason``; a turn
the CLI runs by itself (``origin.kind`` ``task-notification``) after stdin closed, which neither
rescues a failed turn nor goes unjudged when it fails.  Each asserts the class in the run's
``::error::``, ``outcome=failed`` and no receipt; the last case shows an automatic turn that
succeeds after successful turns still lets the receipt through.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"
LISTING = r"/actions/workflows/fullsend\.yml/runs"
COMPLETED = {"terminal_reason": "completed"}


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _run(sim: GitHubSimulator, tmp_path, **knobs: str):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added: dict = {}
    sim.on_request(sim.match("GET", LISTING), lambda s: added.update(run=add_comment_follow_up(s, COMMAND)[1]))
    env = runner_env(tmp_path, sim, fix, inputs={"runtime": "claude"})
    env.update(SCRIPTED_AGENT_TURN_S="4", **knobs)
    run = run_entrypoint(env, tmp_path)
    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)], "the steer never reached the agent"
    assert run.outputs["steers"] == "1", run.stdout
    receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    return run, receipts, added["run"]["id"]


def _stop(reason: str) -> dict[str, str]:
    return {"SCRIPTED_AGENT_RESULT": json.dumps({**COMPLETED, "stop_reason": reason})}


MAX_TURNS = {
    "subtype": "error_max_turns",
    "is_error": True,
    "terminal_reason": "max_turns",
    "errors": ["Reached maximum number of turns (1)"],
}
CASES = [
    pytest.param(
        _stop("pause_turn"), "the model paused its turn before it finished (pause_turn) [interrupted]", id="pause-turn"
    ),
    pytest.param(_stop("refusal"), "the model refused to go on (refusal) [agent-error]", id="refusal"),
    pytest.param(
        _stop("tool_use"),
        "the turn ended with the model's tool calls unanswered (tool_use) [interrupted]",
        id="tool-use",
    ),
    pytest.param(
        _stop("max_tokens"), "the model stopped at its output limit (max_tokens) [limit-reached]", id="max-tokens"
    ),
    pytest.param(
        _stop("invented_by_a_future_cli"),
        "the agent ended in a way the action does not know (stop_reason invented_by_a_future_cli) [protocol-broken]",
        id="unknown-stop-reason",
    ),
    pytest.param(
        {"SCRIPTED_AGENT_RESULT": json.dumps(MAX_TURNS), "SCRIPTED_AGENT_AUTO_TURN": "{}"},
        "the agent stopped at its turn limit (error_max_turns): Reached maximum number of turns (1) [limit-reached]",
        id="automatic-success-after-max-turns",
    ),
    pytest.param(
        {
            "SCRIPTED_AGENT_AUTO_TURN": json.dumps(
                {"subtype": "error_during_execution", "is_error": True, "errors": ["the background task failed"]}
            )
        },
        "the agent's turn failed while it ran (error_during_execution): the background task failed [agent-error]",
        id="background-task-fails-after-the-last-turn",
    ),
]


@pytest.mark.parametrize(("knobs", "error"), CASES)
def test_no_receipt_without_positive_proof(sim, tmp_path, knobs, error):
    run, receipts, follow_up = _run(sim, tmp_path, **knobs)
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["consumed_run_ids"] == "" and run.outputs["receipt_url"] == ""
    assert receipts == []
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors == [f"::error::The run failed: {error}"]
    assert f"- follow-up run {follow_up} [no-receipt]" in run.summary.splitlines()


def test_an_automatic_success_after_successful_turns_still_gets_its_receipt(sim, tmp_path):
    run, receipts, follow_up = _run(
        sim,
        tmp_path,
        SCRIPTED_AGENT_RESULT=json.dumps({**COMPLETED, "stop_reason": "end_turn"}),
        SCRIPTED_AGENT_AUTO_TURN="{}",
    )
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded"
    assert run.outputs["consumed_run_ids"] == str(follow_up)
    assert len(receipts) == 1
