"""Issue 43 acceptance, Claude Code through the whole action: done means the work finished.

Each case runs the entrypoint as a runner starts it, against the GitHub simulator, with the scripted
Claude agent, after a follow-up comment was steered in and acknowledged, so that only the agent's
end stands between the run and a receipt.  The agent then ends in a way its CLI calls success but
the work is not proven done: a sub-agent stopped at the wait ceiling, a refused tool the result's
``permission_denials`` leaves out, a turn the CLI opened and never ended, a result announcing more
turns, an end with no stop reason and no answer.  Each fails the run with its own rule id in the
``::error::`` line, the summary and the terminal status comment (which ``fullsend explain`` reads),
and posts no receipt.  The success path changes only by waiting for delegated work: a sub-agent
that finishes within ``delegated_wait_seconds`` and a background shell still get their receipt.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import ActionRun, run_entrypoint, runner_env
from tests.support.explain_command import READER_LOGIN, READER_TOKEN, run_explain

COMMAND = "/fs-review please re-check the migration"
LISTING = r"/actions/workflows/fullsend\.yml/runs"
ENDED = {"terminal_reason": "completed", "stop_reason": "end_turn"}
REFUSED_READ = [
    {
        "type": "assistant",
        "message": {
            "id": "m-read",
            "content": [
                {"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": "secrets/key.pem"}}
            ],
        },
    },
    {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_r", "is_error": True}]},
        "tool_result_meta": [{"id": "toolu_r", "permission_decision": {"decision": "reject", "source": "config"}}],
    },
]
CUT_OFF_TURN = [{"type": "assistant", "message": {"id": "m-late", "content": [{"type": "text", "text": "Also…"}]}}]


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _run(sim: GitHubSimulator, tmp_path, inputs: dict[str, str] | None = None, **knobs: str):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added: dict[str, Any] = {}
    sim.on_request(sim.match("GET", LISTING), lambda s: added.update(run=add_comment_follow_up(s, COMMAND)[1]))
    env = runner_env(tmp_path, sim, fix, inputs={"runtime": "claude", **(inputs or {})})
    env.update({"SCRIPTED_AGENT_TURN_S": "4", "SCRIPTED_AGENT_RESULT": json.dumps(ENDED), **knobs})
    run = run_entrypoint(env, tmp_path)
    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)], "the steer never reached the agent"
    assert run.outputs["steers"] == "1", run.stdout
    receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    terminal = [c["body"] for c in sim.comments(fix.pr) if "fullsend:status:terminal" in c["body"]]
    return run, receipts, added["run"]["id"], terminal


def _failed_with(run: ActionRun, receipts: list, follow_up: int, terminal: list[str], error: str, rule: str) -> None:
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["consumed_run_ids"] == "" and run.outputs["receipt_url"] == "" and receipts == []
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors == [f"::error::The run failed: {error} [{rule}]"]
    assert f"- follow-up run {follow_up} [no-receipt]" in run.summary.splitlines()
    assert [row for row in run.summary.splitlines() if "agent exited" in row and row.endswith(f"`{rule}` |")]
    assert f"| Error | {error} [`{rule}`] |" in run.summary.splitlines()
    assert len(terminal) == 1 and f"<!-- fullsend:end-rule:{rule} -->" in terminal[0]
    assert f"[`{rule}`]" in terminal[0]


CASES = [
    pytest.param(
        {"delegated_wait_seconds": "1"},
        {"SCRIPTED_AGENT_TASK": json.dumps({"type": "local_agent", "description": "fix the migration", "seconds": 60})},
        'work the agent delegated did not finish: sub-agent "fix the migration" (local_agent) stopped',
        "delegated-unfinished",
        id="sub-agent-stopped-at-the-wait",
    ),
    pytest.param(
        {},
        {"SCRIPTED_AGENT_LINES": json.dumps({"turn": REFUSED_READ})},
        "the agent was refused a tool that expected_denials does not list: Read",
        "tool-refused",
        id="refusal-missing-from-permission-denials",
    ),
    pytest.param(
        {},
        {"SCRIPTED_AGENT_LINES": json.dumps({"end": CUT_OFF_TURN})},
        "a turn of the agent was left unjudged: the output ended while a turn the CLI opened by itself was running",
        "turn-unjudged",
        id="turn-the-cli-opened-cut-off",
    ),
    pytest.param(
        {},
        {"SCRIPTED_AGENT_RESULT": json.dumps({**ENDED, "queued_turn_count": 1})},
        "a turn of the agent was left unjudged: the last turn end announced more turns, and the output ended first",
        "turn-unjudged",
        id="more-turns-announced-at-the-end",
    ),
    pytest.param(
        {},
        {"SCRIPTED_AGENT_SILENT": "1", "SCRIPTED_AGENT_RESULT": json.dumps({**ENDED, "stop_reason": None})},
        "a turn of the agent was left unjudged: the turn ended with no stop reason and no message of the model",
        "turn-unjudged",
        id="no-stop-reason-no-answer",
    ),
]


@pytest.mark.parametrize(("inputs", "knobs", "error", "rule"), CASES)
def test_no_receipt_when_the_work_is_not_proven_done(sim, tmp_path, inputs, knobs, error, rule):
    run, receipts, follow_up, terminal = _run(sim, tmp_path, inputs, **knobs)
    _failed_with(run, receipts, follow_up, terminal, error, rule)


def test_the_cli_is_told_to_wait_as_long_as_the_input_says(sim, tmp_path):
    """The wait reaches Claude Code as its print-mode wait ceiling, in milliseconds; and explain
    prints the rule the run's end broke, read from its terminal status comment."""
    dump = tmp_path / "agent-env.json"
    task = json.dumps({"type": "local_agent", "description": "slow", "seconds": 60})
    inputs = {"delegated_wait_seconds": "2"}
    run, receipts, follow_up, terminal = _run(
        sim, tmp_path, inputs, SCRIPTED_AGENT_TASK=task, SCRIPTED_AGENT_ENV_DUMP=str(dump)
    )
    assert json.loads(dump.read_text())["CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"] == "2000"
    error = 'work the agent delegated did not finish: sub-agent "slow" (local_agent) stopped'
    _failed_with(run, receipts, follow_up, terminal, error, "delegated-unfinished")
    sim.add_token(READER_TOKEN, READER_LOGIN, "User")
    explained = run_explain(sim)
    assert explained.returncode == 0, explained.stderr
    assert "the agent's end failed the run [delegated-unfinished]" in explained.stdout


@pytest.mark.parametrize(
    ("inputs", "knobs"),
    [
        pytest.param(
            {"delegated_wait_seconds": "60"},
            {"SCRIPTED_AGENT_TASK": json.dumps({"type": "local_agent", "description": "tests", "seconds": 1})},
            id="sub-agent-finishes-within-the-wait",
        ),
        pytest.param(
            {"delegated_wait_seconds": "1"},
            {"SCRIPTED_AGENT_TASK": json.dumps({"type": "local_bash", "description": "npm run dev", "seconds": 60})},
            id="background-shell-stopped-at-the-end",
        ),
        pytest.param(
            {"expected_denials": "Read(./secrets/**)"},
            {"SCRIPTED_AGENT_LINES": json.dumps({"turn": REFUSED_READ})},
            id="expected-refusal",
        ),
    ],
)
def test_finished_work_still_gets_its_receipt(sim, tmp_path, inputs, knobs):
    run, receipts, follow_up, terminal = _run(sim, tmp_path, inputs, **knobs)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded"
    assert run.outputs["consumed_run_ids"] == str(follow_up) and len(receipts) == 1
    assert "fullsend:end-rule" not in terminal[0]
    if "local_bash" in knobs.get("SCRIPTED_AGENT_TASK", ""):
        assert (
            '::warning::The agent\'s background shell "npm run dev" (local_bash) stopped at its end; '
            "it does not change the outcome"
        ) in run.stdout
