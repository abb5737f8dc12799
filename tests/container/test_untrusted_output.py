"""Issue 8, output hygiene: an agent that prints workflow commands changes no output and no
annotation of the action.

A hostile agent (the scripted agent behind a filter that makes every assistant message, raw
stdout line and stderr line a workflow command: ``::set-output name=x::y``, ``::add-mask::…``,
``::error::…`` and their relatives, legacy ``##[…]`` forms included) is run through the
entrypoint exactly as tests/app runs the action, next to the same run with a harmless agent.
The step logs are read the way the runner reads them (runner_commands.py: stdout AND stderr,
``::stop-commands::`` honoured); the outputs file is parsed as the runner parses it.  Both must
be the same, with and without a failing agent (the action's own ``::error::`` may quote a failing
agent's stderr, as data on one line).  The agent's text must still reach the log (inside a
stop-commands block), so the test cannot pass by showing nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.container.runner_commands import StepLog, read_step_log
from tests.doubles.hostile_agent import HOSTILE_LINES, MARK, write_agent
from tests.support.action_run import run_entrypoint, runner_env

RULE_TAG = re.compile(r" \[[a-z][a-z0-9-]*\]$")


def _run(tmp: Path, lines: list[str], exit_code: int):
    tmp.mkdir()
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp, sim, fix, inputs={"agent_cli": write_agent(tmp, lines)})
        env.update({"SCRIPTED_AGENT_TURN_S": "0.5", "SCRIPTED_AGENT_EXIT_CODE": str(exit_code)})
        return run_entrypoint(env, tmp)


def assert_same_commands(hostile: StepLog, harmless: StepLog) -> None:
    """The same commands, in order, with the same names and properties (so the same
    annotations, titles, locations, masks and outputs).  A message may differ only by the
    agent's diagnostics appended as data (``<harmless message>: <one line>``), as when the
    action quotes a failing agent's stderr inside its own ``::error::``; a rule id closing the
    line (`` [agent-error]``) stays last, after the data."""
    assert [(c.name, c.props) for c in hostile.commands] == [(c.name, c.props) for c in harmless.commands]
    for mine, theirs in zip(hostile.commands, harmless.commands, strict=True):
        if mine.message != theirs.message:
            assert mine.name in ("error", "warning", "notice"), mine
            tag = RULE_TAG.search(theirs.message)
            rule = tag.group(0) if tag else ""
            head = theirs.message.removesuffix(rule)
            assert mine.message.endswith(rule) and "\n" not in mine.message, mine
            assert mine.message.removesuffix(rule).startswith(head + ": "), mine


@pytest.mark.parametrize("agent_exit", [0, 1], ids=["agent-succeeds", "agent-fails"])
def test_workflow_commands_printed_by_the_agent_change_nothing(tmp_path, agent_exit):
    harmless = _run(tmp_path / "harmless", [], agent_exit)
    hostile = _run(tmp_path / "hostile", HOSTILE_LINES, agent_exit)
    assert harmless.exit_code == hostile.exit_code == (0 if agent_exit == 0 else 1), hostile.stdout + hostile.stderr

    per_run = ("receipt_url", "session_id", "duration_s")  # differ between any two runs
    assert {k: v for k, v in hostile.outputs.items() if k not in per_run} == {
        k: v for k, v in harmless.outputs.items() if k not in per_run
    }
    assert hostile.outputs["session_id"] and hostile.outputs["session_id"] != harmless.outputs["session_id"]
    assert hostile.outputs["outcome"] == ("succeeded" if agent_exit == 0 else "failed")
    assert "x" not in hostile.outputs

    for stream in ("stdout", "stderr"):
        mine = read_step_log(getattr(hostile, stream), stream)
        theirs = read_step_log(getattr(harmless, stream), stream)
        assert not [c for c in mine.commands if MARK in str(c.props) or c.name in ("set-output", "set-env", "add-path")]
        assert "Review" not in mine.masks and MARK not in mine.masks
        assert_same_commands(mine, theirs)

    if agent_exit == 0:  # the agent's text is shown, switched off
        assert "::set-output name=x::y" in hostile.stdout.split("\n")
        assert "##[set-output name=steers;]AGENT-INJECTED" in hostile.stdout.split("\n")
