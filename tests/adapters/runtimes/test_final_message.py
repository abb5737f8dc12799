"""Each runtime's parser keeps the agent's final answer, and Claude Code's the tool calls it refused
(docs/runtimes.md "The final message"; docs/rules.md#tool-denied).  The shapes are the CLIs' own:
Claude Code's ``result`` (``result``, ``permission_denials``), pi's ``message_end``, ``codex exec
--json``'s ``agent_message`` item and ``codex app-server``'s ``agentMessage`` item with its
``phase`` (``codex app-server generate-json-schema``: ``commentary``, ``partial_answer``,
``final_answer`` or null)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.claude.stream import parse_result, permission_denials
from fullsend.adapters.runtimes.codex.appserver.rpc import THREAD_ID
from fullsend.adapters.runtimes.codex.appserver.stream import AppServerParser
from fullsend.adapters.runtimes.codex.exec.stream import CodexStreamParser
from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.adapters.runtimes.pi.stream import PiStreamParser
from fullsend.core.final_word import ToolDenial
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams
from tests.support.transport_run import RunThread

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


class _Clock:
    def now(self) -> datetime:
        return NOW


def _claude_result(**fields: Any) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "result": "Fixed it.",
        "stop_reason": "end_turn",
        "terminal_reason": "completed",
        "permission_denials": [],
        **fields,
    }


def _results(events: list[Any]) -> list[ResultEvent]:
    return [e for e in events if isinstance(e, ResultEvent)]


# -- Claude Code ----------------------------------------------------------------------------------
def test_claude_success_result_is_the_final_message() -> None:
    assert parse_result(_claude_result()).final_message == "Fixed it."


def test_claude_error_result_is_no_final_message() -> None:
    """A success that ``is_error`` carries the error in ``result``: that is the error, not an answer."""
    event = parse_result(_claude_result(is_error=True, result="API Error: 400"))
    assert (event.final_message, event.error_message) == ("", "API Error: 400")


def test_claude_permission_denials_are_collected_with_their_input() -> None:
    event = parse_result(
        _claude_result(
            permission_denials=[
                {"tool_name": "Bash", "tool_use_id": "toolu_01", "tool_input": {"command": "git push", "timeout": 5}},
                {"tool_name": "WebFetch", "tool_use_id": "toolu_02", "tool_input": {"url": "https://example.com"}},
            ]
        )
    )
    assert event.denials == (
        ToolDenial("Bash", "toolu_01", '{"command":"git push","timeout":5}'),
        ToolDenial("WebFetch", "toolu_02", '{"url":"https://example.com"}'),
    )
    assert event.verdict is not None and event.verdict.succeeded  # a refusal does not change the end


@pytest.mark.parametrize("items", [None, "Bash", [None, 3, {"tool_use_id": "x"}, {"tool_name": 7}]])
def test_claude_malformed_denials_are_skipped(items: object) -> None:
    assert permission_denials(items) == ()


# -- pi -------------------------------------------------------------------------------------------
def _pi_assistant(text: str, stop: str = "stop") -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else [{"type": "toolCall", "name": "bash"}]
    return {"type": "message_end", "message": {"role": "assistant", "stopReason": stop, "content": content}}


def test_pi_final_message_is_the_cycles_last_assistant_text() -> None:
    parser = PiStreamParser(_Clock())
    events = [
        *parser.parse({"type": "agent_start"}),
        *parser.parse(_pi_assistant("Looking.", "toolUse")),
        *parser.parse(_pi_assistant("")),
        *parser.parse(_pi_assistant("Fixed the bug.")),
        *parser.parse({"type": "agent_settled"}),
    ]
    assert [r.final_message for r in _results(events)] == ["Fixed the bug."]


def test_pi_a_last_message_without_text_keeps_the_earlier_answer() -> None:
    parser = PiStreamParser(_Clock())
    events = [
        *parser.parse({"type": "agent_start"}),
        *parser.parse(_pi_assistant("Answer.")),
        *parser.parse(_pi_assistant("")),
        *parser.parse({"type": "agent_settled"}),
    ]
    assert _results(events)[0].final_message == "Answer."


# -- Codex exec -----------------------------------------------------------------------------------
def _codex_item(text: str) -> dict[str, Any]:
    return {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": text}}


def test_codex_exec_final_message_is_the_last_agent_message_item() -> None:
    parser = CodexStreamParser()
    for obj in (
        {"type": "thread.started", "thread_id": "th"},
        {"type": "turn.started"},
        _codex_item("Plan."),
        {"type": "item.completed", "item": {"type": "command_execution", "command": "ls"}},
        _codex_item("Done: 2 files."),
        {"type": "turn.completed", "usage": {}},
    ):
        parser.parse(obj)
    assert [r.final_message for r in _results(parser.finish())] == ["Done: 2 files."]


# -- Codex app-server -----------------------------------------------------------------------------
def _app_server() -> AppServerParser:
    parser = AppServerParser(_Clock())
    parser.session.set_opening("k-open", "Implement issue 12")
    parser.parse({"id": THREAD_ID, "result": {"thread": {"id": "th-1"}, "model": "gpt-x"}})
    parser.parse({"method": "turn/started", "params": {"threadId": "th-1", "turn": {"id": "turn-A"}}})
    return parser


def _agent_message(parser: AppServerParser, text: str, phase: str | None, thread: str = "th-1") -> None:
    item = {"type": "agentMessage", "id": f"m-{text}", "text": text, "phase": phase}
    parser.parse({"method": "item/completed", "params": {"threadId": thread, "turnId": "turn-A", "item": item}})


def _turn_completed(parser: AppServerParser) -> list[ResultEvent]:
    return _results(
        parser.parse(
            {
                "method": "turn/completed",
                "params": {"threadId": "th-1", "turn": {"id": "turn-A", "status": "completed"}},
            }
        )
    )


def test_codex_app_server_final_message_is_the_last_answer_not_commentary() -> None:
    parser = _app_server()
    _agent_message(parser, "I will look at the tests first.", "commentary")
    _agent_message(parser, "Fixed; tests pass.", "final_answer")
    _agent_message(parser, "Running one more check.", "commentary")
    _agent_message(parser, "A sub-agent's answer.", "final_answer", thread="th-other")
    assert [r.final_message for r in _turn_completed(parser)] == ["Fixed; tests pass."]


def test_codex_app_server_an_unknown_phase_counts_as_an_answer_and_each_turn_starts_empty() -> None:
    parser = _app_server()
    _agent_message(parser, "Answer without a phase.", None)
    assert _turn_completed(parser)[0].final_message == "Answer without a phase."
    parser.parse({"method": "turn/started", "params": {"threadId": "th-1", "turn": {"id": "turn-B"}}})
    _agent_message(parser, "Only commentary.", "commentary")
    assert _turn_completed(parser)[0].final_message == ""


# -- the live driver, over turns ------------------------------------------------------------------
def test_the_run_keeps_the_latest_turns_answer_and_each_refusal_once(scripted_cli: str, tmp_path: Path) -> None:
    """Two turns (the opening one, then a steer's), each ``result`` repeating the same refusal (as
    a cumulative list would): the run's final message is the second turn's, its denials one."""
    denial = {"tool_name": "Bash", "tool_use_id": "toolu_9", "tool_input": {"command": "git push"}}
    work = tmp_path / "work"
    work.mkdir()
    env = {"SCRIPTED_AGENT_TURN_S": "0.3", "SCRIPTED_AGENT_RESULT": json.dumps({"permission_denials": [denial]})}
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    params = AgentParams(
        sandbox_name="sb-final",
        agent_cli=scripted_cli,
        prompt="Fix issue 42",
        workdir=work,
        env=env,
        steerable=True,
        timeout_s=60,
    )
    run = RunThread(runtime, params).start()
    run.wait_turns(1)
    runtime.steer("sb-final", SteerMessage(5, "also update the changelog"))
    run.wait_turns(2)
    runtime.settle("sb-final")
    result = run.join()
    assert result.turns == 2 and [s.follow_up_run_id for s in result.steers] == [5]
    assert result.final_message == "turn 2 done"
    assert result.denials == (ToolDenial("Bash", "toolu_9", '{"command":"git push"}'),)
