"""Issue 16: every terminal event shape of Claude Code, pi and Codex maps to one class, and only
outright success is success (docs/runtimes.md "Terminal states").

The line shapes below are the CLIs' own: Claude Code's result schema (one success variant and
the error variants ``error_during_execution``, ``error_max_turns``, ``error_max_budget_usd``,
``error_max_structured_output_retries``; ``terminal_reason`` on newer CLIs), pi's rpc events
(``message_end`` with a pi-ai ``stopReason``, ``agent_settled`` with ``aborted``) and Codex's
``exec --json`` events (``turn.completed``, ``turn.failed``, ``error``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.stream import (
    CLAUDE_RESULT_SUBTYPES,
    CLAUDE_TERMINAL_REASONS,
    ClaudeStreamParser,
    parse_result,
)
from fullsend.adapters.runtimes.codex.exec.stream import CODEX_TERMINAL_STATES, CodexStreamParser
from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.adapters.runtimes.pi.stream import PI_STOP_REASONS, PiStreamParser
from fullsend.adapters.runtimes.verdict import process_verdict
from fullsend.core.agent_end import AgentEnd, EndVerdict
from tests.support.transport_run import FixedClock

NOW = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
S, E, L, INT, P = (
    AgentEnd.SUCCESS,
    AgentEnd.AGENT_ERROR,
    AgentEnd.LIMIT_REACHED,
    AgentEnd.INTERRUPTED,
    AgentEnd.PROTOCOL_BROKEN,
)


def _claude_result(subtype: str, is_error: bool, **extra: Any) -> dict[str, Any]:
    """A ``result`` line as Claude Code writes it (the fields of its result schema)."""
    line: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": 1200,
        "duration_api_ms": 900,
        "num_turns": 2,
        "stop_reason": None,
        "total_cost_usd": 0.02,
        "session_id": "ses-1",
        "uuid": "u-1",
        "usage": {
            "input_tokens": 10,
            "output_tokens": 4,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
        "modelUsage": {},
        "permission_denials": [],
    }
    if subtype == "success":
        line["result"] = "done"
    else:
        line["errors"] = [f"{subtype} happened"]
    line.update(extra)
    return line


def _verdict(event: ResultEvent) -> EndVerdict:
    assert event.verdict is not None
    assert event.is_error is (not event.verdict.succeeded)
    return event.verdict


@pytest.mark.parametrize(
    ("subtype", "is_error", "end"),
    [
        ("success", False, S),
        ("success", True, E),
        # The bug of issue 16: error variants with is_error false (older CLIs) are never success.
        ("error_max_turns", False, L),
        ("error_max_turns", True, L),
        ("error_max_budget_usd", False, L),
        ("error_max_structured_output_retries", True, L),
        ("error_during_execution", False, E),
        ("error_during_execution", True, E),
        ("error_brand_new_kind", False, P),
    ],
)
def test_claude_result_subtypes(subtype: str, is_error: bool, end: AgentEnd) -> None:
    verdict = _verdict(parse_result(_claude_result(subtype, is_error)))
    assert verdict.end is end
    if end is S:
        assert verdict.message() == "the agent finished (success)"


def test_claude_turn_limit_names_the_agents_reason() -> None:
    line = _claude_result("error_max_turns", False, errors=["Reached maximum number of turns (1)"])
    event = parse_result(line)
    assert _verdict(event).message() == (
        "the agent stopped at its turn limit (error_max_turns): Reached maximum number of turns (1)"
    )
    assert event.error_message == "Reached maximum number of turns (1)"


def test_claude_success_with_is_error_carries_the_result_text() -> None:
    event = parse_result(_claude_result("success", True, result="API Error: 401 invalid x-api-key"))
    assert _verdict(event).message() == (
        "the agent reported an error (success is_error): API Error: 401 invalid x-api-key"
    )


@pytest.mark.parametrize("row", CLAUDE_TERMINAL_REASONS, ids=lambda r: r.reason)
def test_claude_terminal_reason_decides_a_success_subtype(row) -> None:  # type: ignore[no-untyped-def]
    verdict = _verdict(parse_result(_claude_result("success", False, terminal_reason=row.reason)))
    assert (verdict.end, verdict.reason) == (row.end, row.reason)


def test_claude_terminal_reasons() -> None:
    aborted = parse_result(_claude_result("error_during_execution", True, terminal_reason="aborted_streaming"))
    assert _verdict(aborted).end is INT
    limit = parse_result(_claude_result("error_max_turns", True, terminal_reason="max_turns"))
    assert (_verdict(limit).end, _verdict(limit).reason) == (L, "error_max_turns")
    unknown = parse_result(_claude_result("success", False, terminal_reason="finished_differently"))
    assert _verdict(unknown).end is P
    assert "terminal_reason finished_differently" in _verdict(unknown).message()


def test_claude_tables_cover_the_clis_schema() -> None:
    """The subtypes and terminal reasons of Claude Code's result schema, each classified once."""
    assert {r.reason for r in CLAUDE_RESULT_SUBTYPES} == {
        "success",
        "success is_error",
        "error_max_turns",
        "error_max_budget_usd",
        "error_max_structured_output_retries",
        "error_during_execution",
    }
    assert {r.reason for r in CLAUDE_TERMINAL_REASONS} == {
        "blocking_limit",
        "rapid_refill_breaker",
        "prompt_too_long",
        "image_error",
        "model_error",
        "api_error",
        "malformed_tool_use_exhausted",
        "aborted_streaming",
        "aborted_tools",
        "stop_hook_prevented",
        "hook_stopped",
        "tool_deferred",
        "max_turns",
        "background_requested",
        "completed",
        "budget_exhausted",
        "structured_output_retry_exhausted",
        "tool_deferred_unavailable",
        "turn_setup_failed",
    }
    successes = [r.reason for r in (*CLAUDE_RESULT_SUBTYPES, *CLAUDE_TERMINAL_REASONS) if r.end is S]
    assert successes == ["success", "completed"]


def _pi_cycle(stop_reason: str, settled: dict[str, Any] | None = None, content: list | None = None) -> list[Any]:
    parser = PiStreamParser(FixedClock(NOW))
    message = {
        "role": "assistant",
        "content": [] if content is None else content,
        "stopReason": stop_reason,
        "usage": {"input": 3, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.0}},
    }
    stream = [
        {"type": "agent_start"},
        {"type": "turn_start"},
        {"type": "message_end", "message": message},
        {"type": "turn_end", "message": message, "toolResults": []},
        {"type": "agent_end", "messages": [], "willRetry": False},
        {"type": "agent_settled", "aborted": False, **(settled or {})},
    ]
    events: list[Any] = []
    for obj in stream:
        events += parser.parse(obj)
    return events + parser.finish()


@pytest.mark.parametrize(
    ("stop_reason", "end"),
    [
        ("stop", S),
        ("length", L),
        ("error", E),
        ("aborted", INT),
        ("deferred", INT),
        ("toolUse", P),
        ("pending", P),
        ("somethingNew", P),
    ],
)
def test_pi_stop_reasons(stop_reason: str, end: AgentEnd) -> None:
    [result] = [e for e in _pi_cycle(stop_reason) if isinstance(e, ResultEvent)]
    assert _verdict(result).end is end


def test_pi_empty_aborted_turn_is_not_success() -> None:
    """Issue 16: an empty turn that ends with stopReason aborted (the action never aborts)."""
    [result] = [e for e in _pi_cycle("aborted", content=[]) if isinstance(e, ResultEvent)]
    assert _verdict(result).message() == "the agent's turn was aborted (aborted)"


def test_pi_settled_aborted_wins_over_the_last_stop_reason() -> None:
    [result] = [e for e in _pi_cycle("stop", settled={"aborted": True}) if isinstance(e, ResultEvent)]
    assert (_verdict(result).end, _verdict(result).reason) == (INT, "agent_settled aborted")


def test_pi_table_lists_every_pi_ai_stop_reason() -> None:
    assert {r.reason for r in PI_STOP_REASONS} == {
        "pending",
        "stop",
        "length",
        "toolUse",
        "error",
        "aborted",
        "deferred",
    }


def _codex(stream: list[dict[str, Any]]) -> EndVerdict:
    parser = CodexStreamParser()
    for obj in stream:
        parser.parse(obj)
    [result] = parser.finish()
    assert isinstance(result, ResultEvent)
    return _verdict(result)


STARTED = [{"type": "thread.started", "thread_id": "t-1"}, {"type": "turn.started"}]


@pytest.mark.parametrize(
    ("stream", "end", "reason"),
    [
        (
            [
                *STARTED,
                {"type": "turn.completed", "usage": {"input_tokens": 5, "cached_input_tokens": 0, "output_tokens": 1}},
            ],
            S,
            "turn.completed",
        ),
        (
            [*STARTED, {"type": "turn.failed", "error": {"message": "unexpected status 400 Bad Request"}}],
            E,
            "turn.failed",
        ),
        (
            [
                *STARTED,
                {"type": "error", "message": "You've hit your usage limit."},
                {"type": "turn.failed", "error": {"message": "You've hit your usage limit."}},
            ],
            L,
            "turn.failed",
        ),
        (STARTED, INT, "incomplete"),
        ([{"type": "error", "message": "model not found"}], E, "error"),
        ([], P, "no_turn"),
    ],
)
def test_codex_terminal_states(stream: list[dict[str, Any]], end: AgentEnd, reason: str) -> None:
    verdict = _codex(stream)
    assert (verdict.end, verdict.reason) == (end, reason)


def test_codex_table_has_one_success() -> None:
    assert [r.reason for r in CODEX_TERMINAL_STATES if r.end is S] == ["turn.completed"]


def _last(verdict: EndVerdict) -> ResultEvent:
    return ResultEvent(num_turns=1, is_error=not verdict.succeeded, verdict=verdict)


OK = EndVerdict(S, "success", "the agent finished")
LIMIT = EndVerdict(L, "error_max_turns", "the agent stopped at its turn limit")


@pytest.mark.parametrize(
    ("kwargs", "end", "says"),
    [
        (dict(cancelled=True, timed_out=False, exit_code=0, last=_last(OK)), INT, "the run was cancelled"),
        (dict(cancelled=False, timed_out=True, exit_code=0, last=_last(OK)), L, "within its timeout"),
        (dict(cancelled=False, timed_out=False, exit_code=1, last=_last(LIMIT)), L, "turn limit (error_max_turns)"),
        (
            dict(cancelled=False, timed_out=False, exit_code=3, last=_last(OK), stderr_tail="boom\n"),
            E,
            "exited with code 3: boom",
        ),
        (dict(cancelled=False, timed_out=False, exit_code=0, last=None), P, "without finishing a turn"),
        (
            dict(cancelled=False, timed_out=False, exit_code=0, last=ResultEvent(num_turns=1)),
            P,
            "could not be classified",
        ),
        (dict(cancelled=False, timed_out=False, exit_code=0, last=_last(OK)), S, "the agent finished"),
    ],
)
def test_process_verdict_precedence(kwargs: dict[str, Any], end: AgentEnd, says: str) -> None:
    verdict = process_verdict(**kwargs)
    assert verdict.end is end and says in verdict.message()


def test_a_claude_replay_without_text_opens_nothing() -> None:
    parser = ClaudeStreamParser(FixedClock(NOW))
    frame = {"type": "user", "isReplay": True, "message": {"role": "user", "content": [{"type": "image"}]}}
    assert parser.parse(frame) == []
