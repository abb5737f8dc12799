"""The real Claude Code CLI (pinned) with a background task that outlives its turn: after the
turn ends, the CLI waits for the task and then runs a turn by itself (a ``task-notification``
turn, no new input).  The action waits for the CLI's exit and judges every turn
(docs/runtimes.md "Claude Code"): a turn the CLI starts by itself never turns an earlier
failure into success, and its own failure fails the iteration.

The scripted model answers: first a background Bash call (``run_in_background``) that sleeps
past the end of the turn, then the turn's end, then (for the automatic turn) the swept stop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams, AgentRunResult
from tests.adapters.runtimes.real.real_cli import offline_env, render, require_cli
from tests.doubles.anthropic_server import FakeAnthropic, Reply
from tests.doubles.model_server import ToolCall

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
TASK_S = 3


def _run(tmp_path: Path, first_turn_stop: str, automatic_stop: str, max_turns: int) -> tuple[AgentRunResult, list]:
    calls: list[dict[str, Any]] = []

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        calls.append(body)
        if len(calls) == 1:
            return Reply(
                text="Starting the task.", tool=ToolCall("bash", f"sleep {TASK_S}; echo done", background=True)
            )
        if any("<task-notification>" in str(b.get("messages", [])[-1:]) for b in calls):
            return Reply(text="The background task finished.", stop=automatic_stop)  # the turn and its retries
        return Reply(text="Started it; done here.", stop=first_turn_stop)

    work = tmp_path / "work"
    work.mkdir()
    with FakeAnthropic(script) as model:
        env = offline_env(
            tmp_path / "home",
            ANTHROPIC_BASE_URL=model.base_url,
            ANTHROPIC_API_KEY="sk-ant-fake",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        params = AgentParams(
            sandbox_name="sb-real-claude-bg",
            agent_cli=require_cli("claude"),
            prompt="Start it.",
            workdir=work,
            env=env,
            steerable=False,
            timeout_s=90,
            model="claude-sonnet-4-5",
            extra_args=("--max-turns", str(max_turns)),
        )
        turn_ends: list = []
        result = ClaudeRuntime(sandbox_root_parent=tmp_path, render=render).run(params, turn_ends.append)
    notified = [b for b in calls if "<task-notification>" in str(b.get("messages", [])[-1:])]
    assert notified, "the CLI ran no turn of its own after the background task"
    return result, turn_ends


def test_a_failed_turn_stays_failed_when_the_automatic_turn_succeeds(tmp_path: Path) -> None:
    """The opening turn hits its turn limit while the task runs; the task-notification turn the
    CLI then runs ends cleanly and the CLI exits 0: still not success, so no receipt."""
    result, turn_ends = _run(tmp_path, "end_turn", "end_turn", max_turns=1)
    assert (result.end, result.is_error, result.exit_code) == (AgentEnd.LIMIT_REACHED, True, 0), result.error
    assert "error_max_turns" in result.error and len(turn_ends) == 2


def test_a_failed_automatic_turn_fails_the_iteration(tmp_path: Path) -> None:
    result, turn_ends = _run(tmp_path, "end_turn", "max_tokens", max_turns=5)
    assert (result.end, result.is_error) == (AgentEnd.AGENT_ERROR, True), result.error
    assert len(turn_ends) == 2


def test_two_clean_turns_are_success_after_the_cli_exits(tmp_path: Path) -> None:
    """Both turns end cleanly: success, judged only once the CLI exited, after the task."""
    result, turn_ends = _run(tmp_path, "end_turn", "end_turn", max_turns=5)
    assert (result.end, result.is_error, result.exit_code) == (AgentEnd.SUCCESS, False, 0), result.error
    assert len(turn_ends) == 2
