"""Issue 16 acceptance: no receipt unless the shipped iteration ended in outright success.

Each case runs the whole action (entrypoint subprocess, runner env, GitHub simulator on
127.0.0.1) with the scripted agent ending in one non-success shape of its CLI, after a
follow-up run was steered in and acknowledged, so that only the agent's end stands between the
run and a receipt.  Each asserts ``outcome=failed``, exit 1, no receipt, and one ``::error::``
naming the agent's reason and the rule id.  Then the folded replay: two steers queued during
one turn, replayed as one message, both acknowledged and receipted; and agent text with lone
surrogates, which never breaks the runner's commands.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"
LISTING = r"/actions/workflows/fullsend\.yml/runs"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _scenario(sim: GitHubSimulator):
    return standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))


CASES = [
    pytest.param(
        "claude",
        {"subtype": "error_max_turns", "is_error": False, "errors": ["Reached maximum number of turns (1)"]},
        "the agent stopped at its turn limit (error_max_turns): Reached maximum number of turns (1) [limit-reached]",
        id="claude-turn-limit-is-error-false",
    ),
    pytest.param(
        "claude",
        {"subtype": "error_during_execution", "is_error": True, "errors": ["the tool runner crashed"]},
        "the agent's turn failed while it ran (error_during_execution): the tool runner crashed [agent-error]",
        id="claude-error-during-execution",
    ),
    pytest.param(
        "pi",
        {"stopReason": "aborted", "content": []},
        "the agent's turn was aborted (aborted) [interrupted]",
        id="pi-empty-aborted-turn",
    ),
    pytest.param(
        "claude",
        {"subtype": "error_brand_new_kind", "is_error": False},
        "the agent ended in a way the action does not know (subtype error_brand_new_kind) [protocol-broken]",
        id="claude-unknown-subtype",
    ),
]


@pytest.mark.parametrize(("runtime", "end_shape", "error"), CASES)
def test_a_non_success_end_fails_the_run_and_posts_no_receipt(sim, tmp_path, runtime, end_shape, error):
    fix = _scenario(sim)
    added: dict = {}
    sim.on_request(sim.match("GET", LISTING), lambda s: added.update(run=add_comment_follow_up(s, COMMAND)[1]))
    env = runner_env(tmp_path, sim, fix, inputs={"runtime": runtime})
    env.update(SCRIPTED_AGENT_RESULT=json.dumps(end_shape), SCRIPTED_AGENT_TURN_S="4")
    run = run_entrypoint(env, tmp_path)

    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)], "the steer never reached the agent"
    assert run.outputs["steers"] == "1", run.stdout
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["consumed_run_ids"] == "" and run.outputs["receipt_url"] == ""
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] == []
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors == [f"::error::The run failed: {error}"]
    # The acknowledged update is not lost: the summary leaves it to its queued run, and says why.
    assert f"- follow-up run {added['run']['id']} [no-receipt]" in run.summary.splitlines()


@pytest.mark.parametrize("fold", ["string", "blocks"])
def test_two_steers_folded_into_one_replay_are_both_acknowledged(sim, tmp_path, fold):
    """Claude replays two steers queued during one turn as ONE message: their texts joined by a
    newline (what the pinned CLI writes for a batch of queued messages) or two text blocks."""
    fix = _scenario(sim)
    runs: list[int] = []
    first_at: list[float] = []

    def follow_up(s: GitHubSimulator) -> None:
        # One follow-up at the first poll, another at a poll two seconds later: two steers, one turn
        # (a poll reads the item, and lists while the listing gate is open).
        if not runs or (len(runs) == 1 and time.monotonic() - first_at[0] >= 2.0):
            runs.append(add_comment_follow_up(s, f"{COMMAND} (part {len(runs) + 1})")[1]["id"])
            first_at.append(time.monotonic())

    listing, item_read = sim.match("GET", LISTING), sim.match("GET", rf"/issues/{fix.pr}$")
    sim.on_request(lambda r: listing(r) or item_read(r), follow_up, once=False)  # a poll: gated or listing
    env = runner_env(tmp_path, sim, fix)
    env.update(SCRIPTED_AGENT_ECHO="boundary", SCRIPTED_AGENT_FOLD=fold, SCRIPTED_AGENT_TURN_S="6")
    run = run_entrypoint(env, tmp_path)

    assert run.exit_code == 0, run.stdout + run.stderr
    assert len([m for m in run.agent_messages if m.startswith(OPENING_LINE)]) == 2
    assert run.outputs["outcome"] == "succeeded" and run.outputs["steers"] == "2"
    receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == tuple(sorted(runs))


def test_lone_surrogates_in_agent_text_never_break_the_runner_commands(sim, tmp_path):
    """The agent says a lone surrogate and fails with one in its error text (JSON escapes, as a
    CLI's JSON.stringify writes them): every stop-commands block closes, the run's ::error:: is
    outside any block, and the step summary is written."""
    fix = _scenario(sim)
    env = runner_env(tmp_path, sim, fix)
    env.update(
        SCRIPTED_AGENT_TURN_S="1",
        SCRIPTED_AGENT_SAY='"I wrote \\ud800 here"',
        SCRIPTED_AGENT_RESULT='{"subtype": "error_during_execution", "is_error": true, '
        '"errors": ["bad byte \\udcff in a tool result"]}',
    )
    run = run_entrypoint(env, tmp_path)

    assert run.exit_code == 1, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    opened = [line.removeprefix("::stop-commands::") for line in lines if line.startswith("::stop-commands::")]
    assert opened and all(f"::{token}::" in lines for token in opened)
    assert "I wrote \ufffd here" in lines
    assert (
        lines.count(
            "::error::The run failed: the agent's turn failed while it ran (error_during_execution): "
            "bad byte \ufffd in a tool result [agent-error]"
        )
        == 1
    )
    last_close = max(lines.index(f"::{token}::") for token in opened)
    assert lines.index(next(line for line in lines if line.startswith("::error::"))) > last_close
    assert "bad byte \ufffd in a tool result" in run.summary and "❌ failed" in run.summary
