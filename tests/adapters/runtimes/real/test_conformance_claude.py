"""Conformance of the real, pinned Claude Code CLI (issue 16): each terminal state it can reach
against the scripted Anthropic server, classified as docs/runtimes.md says, with its acks, its
error text and no receipt unless the end is outright success.

Reached for real here: success at EOF, the turn limit (``--max-turns 1`` and a model that keeps
calling a tool: ``error_max_turns``), the spending limit (``--max-budget-usd``:
``error_max_budget_usd``), a non-retryable model error and a retryable one with the CLI's
retries capped (``CLAUDE_CODE_MAX_RETRIES=0``; both ``success`` with ``is_error: true``), two
steers queued during one turn (the pinned CLI runs them as one batch and replays them as ONE
message, their texts joined by a newline), and a steer after the last turn.  Not reachable
offline: ``error_during_execution`` and ``error_max_structured_output_retries``; their shapes,
from the CLI's result schema, are unit-tested in ``test_terminal_states.py``, as is the
text-block form of a folded replay in ``test_acks_by_identity.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.events import UserReplayEvent
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams, AgentRunResult
from tests.adapters.runtimes.real.conformance import (
    FIRST,
    LATE,
    SECOND,
    Steering,
    assert_failed,
    assert_succeeded,
    busy_then_done,
    done,
    fails,
    keeps_calling_a_tool,
    slow_answer_first,
)
from tests.adapters.runtimes.real.real_cli import (
    RunInThread,
    offline_env,
    record_events,
    render,
    require_cli,
    wait_until,
)
from tests.doubles.anthropic_server import FakeAnthropic
from tests.doubles.model_server import ModelError

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROMPT = "Fix issue 42 and report back."


def _params(tmp_path: Path, model: FakeAnthropic, steerable: bool, *extra: str, **env: str) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    environment = offline_env(
        tmp_path / "home",
        ANTHROPIC_BASE_URL=model.base_url,
        ANTHROPIC_API_KEY="sk-ant-fake",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        **env,
    )
    return AgentParams(
        sandbox_name="sb-conf-claude",
        agent_cli=require_cli("claude"),
        prompt=PROMPT,
        workdir=work,
        env=environment,
        steerable=steerable,
        timeout_s=90,
        model="claude-sonnet-4-5",
        extra_args=("--max-turns", "6", *extra) if "--max-turns" not in extra else extra,
    )


def _unsteered(tmp_path: Path, script: Any, *extra: str, **env: str) -> AgentRunResult:
    with FakeAnthropic(script) as model:
        runtime = ClaudeRuntime(sandbox_root_parent=tmp_path, render=render)
        return RunInThread(runtime, _params(tmp_path, model, False, *extra, **env)).start().join()


def test_success_then_eof(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, done("All done: final-word-claude."))
    assert_succeeded(result, [])
    assert result.turns == 1
    assert result.final_message == "All done: final-word-claude."  # the result event's `result`
    assert result.denials == ()


def test_a_tool_refused_by_disallowed_tools_is_reported_and_fails_the_turn(tmp_path: Path) -> None:
    """``--disallowedTools`` with a Bash rule: the CLI refuses the model's call, says so in its
    result's ``permission_denials`` and ends the turn ``success``; a refusal no ``expected_denials``
    line covers is not success (docs/rules.md#tool-refused, #tool-denied)."""
    marker = tmp_path / "work" / "pushed.flag"
    result = _unsteered(tmp_path, busy_then_done(f"touch {marker.name}"), "--disallowedTools", "Bash(touch:*)")
    assert_failed(
        result, AgentEnd.AGENT_ERROR, "the agent was refused a tool that expected_denials does not list: Bash"
    )
    assert result.end_rule == "tool-refused"
    assert not marker.exists(), "the refused command ran"
    assert [(d.tool_name, json.loads(d.tool_input)["command"]) for d in result.denials] == [
        ("Bash", f"touch {marker.name}")
    ]
    assert result.denials[0].tool_use_id
    assert result.final_message == "All done."


def test_turn_limit_is_limit_reached(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, keeps_calling_a_tool(), "--max-turns", "1")
    assert_failed(
        result,
        AgentEnd.LIMIT_REACHED,
        "the agent stopped at its turn limit (error_max_turns): Reached maximum number of turns (1)",
    )


def test_spending_limit_is_limit_reached(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, keeps_calling_a_tool(), "--max-budget-usd", "0.0001")
    assert_failed(result, AgentEnd.LIMIT_REACHED, "the agent stopped at its spending limit (error_max_budget_usd)")


def test_non_retryable_model_error_is_agent_error(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, fails())
    assert_failed(result, AgentEnd.AGENT_ERROR, "the agent reported an error (success is_error): API Error: 400")


def test_retryable_model_error_with_retries_capped_is_agent_error(tmp_path: Path) -> None:
    error = ModelError(529, "overloaded_error", "scripted: overloaded")
    result = _unsteered(tmp_path, fails(error), CLAUDE_CODE_MAX_RETRIES="0")
    assert_failed(result, AgentEnd.AGENT_ERROR, "the agent reported an error (success is_error)")


def test_two_steers_queued_during_one_turn_are_both_acked(tmp_path: Path) -> None:
    """The model's first answer is held back; both steers are queued meanwhile.  The pinned CLI
    runs them after that turn as one batch, replayed as one message (texts joined by a newline)."""
    with FakeAnthropic(slow_answer_first(4.0)) as model:
        runtime = ClaudeRuntime(sandbox_root_parent=tmp_path, render=render)
        replays: list[UserReplayEvent] = record_events(runtime, UserReplayEvent)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        wait_until(lambda: any(c.body.get("tools") for c in model.calls), "the first turn asked its model", run)
        steering = Steering(runtime, run)
        steering.steer(FIRST, SECOND)
        wait_until(lambda: model.saw_text("conf-marker-second"), "the steers reached the model", run)
        result = steering.finish()
    assert_succeeded(result, [FIRST.follow_up_run_id, SECOND.follow_up_run_id])
    assert result.turns == 2  # the opening turn, then the batch of both steers as one turn
    both = [r for r in replays if "conf-marker-first" in r.content and "conf-marker-second" in r.content]
    assert len(both) == 1, f"the CLI did not fold the two steers into one replay: {replays}"


def test_steer_after_the_last_turn_starts_a_turn_and_is_acked(tmp_path: Path) -> None:
    with FakeAnthropic(done()) as model:
        runtime = ClaudeRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        steering = Steering(runtime, run)
        steering.after_first_turn()
        steering.steer(LATE)
        wait_until(lambda: model.saw_text("conf-marker-late"), "the late steer reached the model", run)
        result = steering.finish()
    assert_succeeded(result, [LATE.follow_up_run_id])
    assert result.turns == 2
