"""Issue 43, Claude Code: what the parser finds itself, line by line, in the shapes the pinned CLI
writes (its SDK's task messages, ``tool_result_meta``, ``queued_turn_count``; the lines below are
cut from the real 2.1.332's output): delegated work, refused calls, turns nobody judged."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.stream import ClaudeStreamParser
from fullsend.adapters.runtimes.events import (
    AgentEvent,
    FaultEvent,
    NoticeEvent,
    RefusalEvent,
    ResultEvent,
    TurnOpenEvent,
)
from fullsend.core.agent_end import RULE_DELEGATED_UNFINISHED, RULE_TURN_UNJUDGED, AgentEnd
from fullsend.core.final_word import ToolDenial
from tests.support.transport_run import FixedClock

NOW = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)
DONE: dict[str, Any] = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "num_turns": 1,
    "terminal_reason": "completed",
    "stop_reason": "end_turn",
    "result": "Done.",
    "queued_turn_count": 0,
}


def replay(text: str = "Do the task.") -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, "isReplay": True, "parent_tool_use_id": None}


def assistant(text: str = "Done.", parent: str | None = None, tool: dict[str, Any] | None = None) -> dict[str, Any]:
    content = [tool] if tool else [{"type": "text", "text": text}]
    return {"type": "assistant", "message": {"id": "m", "content": content}, "parent_tool_use_id": parent}


def task(subtype: str, task_id: str, task_type: str = "local_agent", **fields: Any) -> dict[str, Any]:
    return {"type": "system", "subtype": subtype, "task_id": task_id, "task_type": task_type, **fields}


def events(*lines: dict[str, Any]) -> tuple[list[AgentEvent], list[AgentEvent]]:
    """(events of every line, events owed at EOF) of one parser."""
    parser = ClaudeStreamParser(FixedClock(NOW))
    seen = [e for line in lines for e in parser.parse(line)]
    return seen, parser.finish()


def faults(owed: list[AgentEvent]) -> list[tuple[str, str]]:
    return [(e.verdict.rule_id, e.verdict.message()) for e in owed if isinstance(e, FaultEvent)]


# -- delegated work (docs/rules.md#delegated-unfinished) ----------------------------------------


def test_a_sub_agent_stopped_at_the_wait_ceiling_leaves_the_work_unfinished() -> None:
    """As the pinned CLI ends a background sub-agent at its print-mode wait ceiling: task_updated
    killed, task_notification stopped, then exit 0 after a success."""
    _seen, owed = events(
        replay(),
        task("task_started", "a84", description="long sub", is_backgrounded=True),
        assistant(),
        DONE,
        task("task_updated", "a84", patch={"status": "killed"}),
        task("task_notification", "a84", status="stopped", description="long sub"),
        {"type": "system", "subtype": "background_tasks_changed", "tasks": []},
    )
    assert faults(owed) == [
        (
            RULE_DELEGATED_UNFINISHED,
            'work the agent delegated did not finish: sub-agent "long sub" (local_agent) stopped',
        )
    ]


@pytest.mark.parametrize("status", ["failed", "killed", "stopped", "", "invented_by_a_future_cli"])
def test_a_delegated_task_ending_other_than_completed_is_unfinished(status: str) -> None:
    _seen, owed = events(
        task("task_started", "w1", "local_workflow", description="spec"),
        assistant(),
        DONE,
        task("task_notification", "w1", "local_workflow", status=status),
    )
    assert [rule for rule, _ in faults(owed)] == [RULE_DELEGATED_UNFINISHED]


def test_a_sub_agent_still_running_when_the_output_ends_is_unfinished() -> None:
    """Listed only by background_tasks_changed (a task_started can come after it), never ended."""
    background = {"type": "system", "subtype": "background_tasks_changed"}
    live = {**background, "tasks": [{"task_id": "b1", "task_type": "local_agent", "description": "bg"}]}
    _seen, owed = events(replay(), live, assistant(), DONE)
    assert faults(owed) == [
        (
            RULE_DELEGATED_UNFINISHED,
            'work the agent delegated did not finish: sub-agent "bg" (local_agent) still running',
        )
    ]


def test_a_completed_sub_agent_and_a_resumed_one_that_completes_are_finished() -> None:
    _seen, owed = events(
        replay(),
        task("task_started", "a1", description="one"),
        task("task_notification", "a1", status="completed"),
        task("task_started", "a2", description="two"),
        task("task_notification", "a2", status="stopped"),
        task("task_started", "a2", description="two"),  # resumed: a new run under the same id
        task("task_notification", "a2", status="completed"),
        assistant(),
        DONE,
    )
    assert owed == []


def test_background_shells_stopped_at_the_end_are_noticed_and_decide_nothing() -> None:
    """A dev server (local_bash), a monitor and a housekeeping task the CLI stops at its wind-down."""
    _seen, owed = events(
        replay(),
        task("task_started", "s1", "local_bash", description="npm run dev", is_backgrounded=True),
        task("task_started", "m1", "monitor_ws", description="watch"),
        task("task_started", "d1", "dream", description="tidy", ambient=True),
        assistant(),
        DONE,
        task("task_notification", "s1", "local_bash", status="stopped"),
    )
    assert faults(owed) == []
    assert [e.text for e in owed if isinstance(e, NoticeEvent)] == [
        'The agent\'s background shell "npm run dev" (local_bash) stopped at its end; it does not change the outcome',
        'The agent\'s background monitor "watch" (monitor_ws) still running at its end; it does not change the outcome',
        'The agent\'s background task "tidy" (dream) still running at its end; it does not change the outcome',
    ]


# -- refused calls (docs/rules.md#tool-refused) -------------------------------------------------

BASH = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo hi"}}


def refused_result(content: str, meta: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": content, "is_error": True}
    line: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": None}
    if meta is not None:
        line["tool_result_meta"] = meta
    return line


@pytest.mark.parametrize(
    "line",
    [
        refused_result(
            "Permission to use Bash with command echo hi has been denied.",
            [{"id": "toolu_1", "non_execution_kind": "permission-rule", "permission_decision": {"decision": "reject"}}],
        ),
        refused_result("anything", [{"id": "toolu_1", "permission_decision": {"decision": "reject"}}]),
        refused_result("anything", [{"id": "toolu_1", "non_execution_kind": "automode-blocked"}]),
        refused_result("Permission to use Bash with command echo hi has been denied."),  # no meta: the sentence
        refused_result(
            "<tool_use_error>Error: No such tool available: Bash. Bash is disabled for this session, in subagents "
            "as well as here.</tool_use_error>"
        ),
    ],
    ids=["permission-rule", "reject", "automode", "sentence", "disallowed-tool"],
)
def test_a_refusal_in_a_tool_result_is_reported_with_the_call(line: dict[str, Any]) -> None:
    seen, _owed = events(replay(), assistant(tool=BASH), line)
    assert [e for e in seen if isinstance(e, RefusalEvent)] == [
        RefusalEvent((ToolDenial("Bash", "toolu_1", '{"command":"echo hi"}'),))
    ]


@pytest.mark.parametrize(
    "line",
    [
        refused_result("exit code 1: no such file"),  # the tool ran and failed: not a refusal
        refused_result(
            "Permission to use Bash has been denied.", [{"id": "toolu_1", "non_execution_kind": "cancelled"}]
        ),
    ],
    ids=["tool-error", "meta-says-cancelled"],
)
def test_a_failed_or_cancelled_call_is_not_a_refusal(line: dict[str, Any]) -> None:
    seen, _owed = events(replay(), assistant(tool=BASH), line)
    assert not [e for e in seen if isinstance(e, RefusalEvent)]


# -- turns nobody judged (docs/rules.md#turn-unjudged) ------------------------------------------


def test_a_turn_the_cli_opens_by_itself_and_never_ends_is_unjudged() -> None:
    """A task-notification turn cut off by the exit: its assistant line opens it, no result follows."""
    seen, owed = events(replay(), assistant(), DONE, {"type": "system", "subtype": "init"}, assistant("Hm."))
    assert seen.count(TurnOpenEvent()) == 1  # the replay's turn is the feed's; the CLI's own is announced
    assert faults(owed) == [
        (
            RULE_TURN_UNJUDGED,
            "a turn of the agent was left unjudged: the output ended while a turn the CLI opened by itself was running",
        )
    ]


@pytest.mark.parametrize(
    "opener",
    [
        {"type": "stream_event", "event": {"type": "message_start"}, "parent_tool_use_id": None},
        {"type": "user", "message": {"role": "user", "content": "note"}, "origin": {"kind": "task-notification"}},
        {"type": "system", "subtype": "session_state_changed", "state": "running"},
    ],
    ids=["stream-event", "user-with-origin", "running-state"],
)
def test_any_line_of_a_turn_opens_it(opener: dict[str, Any]) -> None:
    seen, owed = events(replay(), assistant(), DONE, opener)
    assert seen[-1] == TurnOpenEvent() and [rule for rule, _ in faults(owed)] == [RULE_TURN_UNJUDGED]


def test_a_sub_agents_lines_after_the_turn_open_no_turn() -> None:
    _seen, owed = events(replay(), assistant(), DONE, assistant("Sub working.", parent="toolu_9"))
    assert faults(owed) == []


def test_a_result_announcing_more_turns_left_at_the_end_is_unjudged() -> None:
    _seen, owed = events(replay(), assistant(), {**DONE, "queued_turn_count": 1})
    assert faults(owed) == [
        (
            RULE_TURN_UNJUDGED,
            "a turn of the agent was left unjudged: the last turn end announced more turns, and the output ended first",
        )
    ]
    _seen, owed = events(replay(), assistant(), {**DONE, "queued_turn_count": 1}, replay("next"), assistant(), DONE)
    assert owed == []  # the announced turn came and was judged


@pytest.mark.parametrize("stop", [None, "absent"])
def test_no_stop_reason_is_success_only_with_a_message_of_the_model(stop: str | None) -> None:
    line = {**DONE, "num_turns": 0, "stop_reason": stop}
    if stop == "absent":
        del line["stop_reason"]
    [result] = [e for e in events(replay(), line)[0] if isinstance(e, ResultEvent)]
    assert result.verdict is not None and (result.verdict.end, result.verdict.rule_id) == (
        AgentEnd.PROTOCOL_BROKEN,
        RULE_TURN_UNJUDGED,
    )
    assert result.final_message == ""
    [answered] = [e for e in events(replay(), assistant(), line)[0] if isinstance(e, ResultEvent)]
    assert answered.verdict is not None and answered.verdict.succeeded


def test_a_result_is_judged_when_it_is_read() -> None:
    """The turn closes on its result line, before EOF: a later EOF owes nothing for it."""
    parser = ClaudeStreamParser(FixedClock(NOW))
    parser.parse(replay())
    parser.parse(assistant())
    [result] = parser.parse(DONE)
    assert isinstance(result, ResultEvent) and result.verdict is not None and result.verdict.succeeded
    assert parser.finish() == []
