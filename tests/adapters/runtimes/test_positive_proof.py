"""Issue 27: a turn is success only on positive proof, and every turn of the iteration is judged
(docs/runtimes.md "Terminal states", "Which end counts").

Claude Code's ``result`` is success only when ``subtype``, ``is_error``, ``terminal_reason`` and
``stop_reason`` all say so; any other value, an invented one included, is not.  A turn that was
not success decides the iteration, whatever turns come after it (a turn the CLI starts by
itself when a background task ends, ``origin.kind`` ``task-notification``, above all).
"""

from __future__ import annotations

from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.stream import CLAUDE_STOP_REASONS, parse_result
from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.adapters.runtimes.verdict import judged_turn, process_verdict
from fullsend.core.agent_end import AgentEnd, EndVerdict

S, E, L, INT, P = (
    AgentEnd.SUCCESS,
    AgentEnd.AGENT_ERROR,
    AgentEnd.LIMIT_REACHED,
    AgentEnd.INTERRUPTED,
    AgentEnd.PROTOCOL_BROKEN,
)
AUTOMATIC = {"origin": {"kind": "task-notification"}}


def _result(**fields: Any) -> dict[str, Any]:
    """A successful ``result`` line as the pinned Claude Code writes it, with ``fields`` over it."""
    line: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "result": "done",
        "terminal_reason": "completed",
        "stop_reason": "end_turn",
        "session_id": "ses-1",
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    line.update(fields)
    return line


def _verdict(line: dict[str, Any]) -> EndVerdict:
    event = parse_result(line)
    assert event.verdict is not None and event.is_error is (not event.verdict.succeeded)
    return event.verdict


@pytest.mark.parametrize(
    ("stop_reason", "end", "message"),
    [
        ("end_turn", S, "the agent finished (completed)"),
        ("stop_sequence", S, "the agent finished (completed)"),
        (None, S, "the agent finished (completed)"),
        ("max_tokens", L, "the model stopped at its output limit (max_tokens)"),
        (
            "model_context_window_exceeded",
            L,
            "the conversation reached the model's context window (model_context_window_exceeded)",
        ),
        ("pause_turn", INT, "the model paused its turn before it finished (pause_turn)"),
        ("tool_use", INT, "the turn ended with the model's tool calls unanswered (tool_use)"),
        ("refusal", E, "the model refused to go on (refusal)"),
    ],
)
def test_claude_stop_reason_of_a_completed_success(stop_reason: str | None, end: AgentEnd, message: str) -> None:
    verdict = _verdict(_result(stop_reason=stop_reason))
    assert (verdict.end, verdict.message()) == (end, message)


def test_claude_stop_reason_table_has_exactly_two_successes() -> None:
    assert [r.reason for r in CLAUDE_STOP_REASONS if r.end is S] == ["end_turn", "stop_sequence"]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"stop_reason": "compaction_requested"}, "stop_reason compaction_requested"),  # invented, no row
        ({"stop_reason": ""}, "stop_reason (none)"),
        ({"stop_reason": 7}, "stop_reason 7"),
        ({"terminal_reason": ""}, "terminal_reason (none)"),
        ({"terminal_reason": ["completed"]}, 'terminal_reason ["completed"]'),
        ({"is_error": "false"}, 'is_error "false"'),
        ({"is_error": None}, "is_error null"),
    ],
)
def test_a_value_no_table_has_fails_closed_naming_it(fields: dict[str, Any], named: str) -> None:
    verdict = _verdict(_result(**fields))
    assert verdict.end is P
    assert verdict.message() == f"the agent ended in a way the action does not know ({named})"


def test_a_cli_that_writes_neither_reason_still_succeeds() -> None:
    line = _result()
    del line["terminal_reason"], line["stop_reason"]
    assert _verdict(line).end is S


def test_an_error_subtype_keeps_its_class_whatever_the_stop_reason() -> None:
    verdict = _verdict(
        _result(
            subtype="error_max_turns",
            is_error=True,
            errors=["Reached maximum number of turns (1)"],
            terminal_reason="max_turns",
            stop_reason="end_turn",
        )
    )
    assert (verdict.end, verdict.reason) == (L, "error_max_turns")


def _event(end: AgentEnd, reason: str = "x") -> ResultEvent:
    return ResultEvent(is_error=end is not S, verdict=EndVerdict(end, reason, f"says {reason}"))


def _decide(events: list[ResultEvent]) -> ResultEvent | None:
    kept: ResultEvent | None = None
    for event in events:
        kept = judged_turn(kept, event)
    return kept


def test_an_automatic_success_after_a_turn_limit_does_not_make_the_iteration_succeed() -> None:
    """The shape of the pinned Claude Code: the steered turn ends error_max_turns, then a background
    task's notification runs a turn of the CLI's own that ends success, then exit 0."""
    failed = parse_result(
        _result(
            subtype="error_max_turns",
            is_error=True,
            terminal_reason="max_turns",
            errors=["Reached maximum number of turns (1)"],
        )
    )
    automatic = parse_result(_result(**AUTOMATIC))
    assert automatic.verdict is not None and automatic.verdict.succeeded
    verdict = process_verdict(cancelled=False, timed_out=False, exit_code=0, last=_decide([failed, automatic]))
    assert (
        verdict.message()
        == "the agent stopped at its turn limit (error_max_turns): Reached maximum number of turns (1)"
    )


@pytest.mark.parametrize(
    ("ends", "decider"),
    [
        ([S], 0),
        ([S, S, S], 2),
        ([INT, S], 0),
        ([S, L, S], 1),
        ([S, E, P], 1),  # the first failure stays
        ([S, S, E], 2),  # a later (automatic) turn that fails fails the iteration
    ],
)
def test_every_turn_is_judged(ends: list[AgentEnd], decider: int) -> None:
    events = [_event(end, f"turn{i}") for i, end in enumerate(ends)]
    assert _decide(events) is events[decider]


def test_an_unclassified_turn_is_never_replaced_by_a_later_success() -> None:
    unclassified = ResultEvent(verdict=None)
    kept = judged_turn(judged_turn(None, unclassified), _event(S))
    assert kept is unclassified
    verdict = process_verdict(cancelled=False, timed_out=False, exit_code=0, last=kept)
    assert verdict.end is P


def test_a_codex_turn_that_reported_a_final_error_is_not_success_even_when_completed() -> None:
    from fullsend.adapters.runtimes.codex.appserver.stream import turn_verdict

    verdict = turn_verdict({"status": "completed"}, last_error="stream disconnected before completion")
    assert (verdict.end, verdict.message()) == (
        E,
        "the codex turn reported an error and still said completed "
        "(completed after error): stream disconnected before completion",
    )
    assert turn_verdict({"status": "completed"}).end is S
    assert turn_verdict({"status": "inProgress"}).end is P


def test_an_unreadable_output_line_is_reported_and_decides_the_iteration() -> None:
    """A failed turn whose result line was too long to read cannot be outweighed by a later success."""
    import io

    from fullsend.adapters.runtimes.events import iter_json_lines
    from fullsend.adapters.runtimes.verdict import unreadable_output

    stream = io.BytesIO(
        b'{"type":"result","subtype":"success"}\n'
        + b'{"x":"'
        + b"y" * 64
        + b'"}\n'
        + b'{"type": broken\nplain text\n\n[1, 2]\n{"ok": 1}\n'
    )
    why: list[str] = []
    assert [obj for obj in iter_json_lines(stream, max_line_bytes=40, on_unreadable=why.append)] == [
        {"type": "result", "subtype": "success"},
        {"ok": 1},
    ]
    assert why == [
        "an output line longer than 40 bytes",
        "an output line that opens like a JSON object and does not parse as one",
    ]
    owed = unreadable_output(why[0])
    kept = judged_turn(judged_turn(None, owed), _event(S))
    verdict = process_verdict(cancelled=False, timed_out=False, exit_code=0, last=kept)
    assert (verdict.end, verdict.reason) == (P, "unreadable-line")
    assert verdict.message().startswith("the agent wrote an output line longer than 40 bytes")
