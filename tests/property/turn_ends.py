"""End states of the receipt-promise machine drawn as the turns of an iteration (issue 27;
docs/runtimes.md "Which end counts"): the ``result`` lines Claude Code writes for each turn, the
automatic ones (``origin.kind`` ``task-notification``) included.  The run's end class comes from
the real parser and the real turn judgment (looked up on ``verdict`` at call time, so a mutation
can patch it); the oracle is that none of these is success."""

from __future__ import annotations

from typing import Any

from fullsend.adapters.runtimes import verdict
from fullsend.adapters.runtimes.claude.stream import parse_result
from fullsend.core.agent_end import EndVerdict

_DONE: dict[str, Any] = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "num_turns": 1,
    "terminal_reason": "completed",
    "stop_reason": "end_turn",
}
_AUTOMATIC: dict[str, Any] = {**_DONE, "origin": {"kind": "task-notification"}}
_MAX_TURNS: dict[str, Any] = {
    **_DONE,
    "subtype": "error_max_turns",
    "is_error": True,
    "terminal_reason": "max_turns",
    "stop_reason": None,
    "errors": ["Reached maximum number of turns (1)"],
}


def _stop(reason: str) -> dict[str, Any]:
    return {**_DONE, "stop_reason": reason}


#: end state -> the result line of every turn of the iteration, in order (none of them is success).
TURN_LINES: dict[str, tuple[dict[str, Any], ...]] = {
    "turns:pause-turn": (_stop("pause_turn"),),
    "turns:refusal": (_DONE, _stop("refusal")),
    "turns:tool-use": (_stop("tool_use"),),
    "turns:max-tokens": (_stop("max_tokens"),),
    "turns:unknown-stop-reason": (_stop("invented_by_a_future_cli"),),
    "turns:automatic-success-after-max-turns": (_MAX_TURNS, _AUTOMATIC),
    "turns:automatic-success-after-pause-turn": (_stop("pause_turn"), _AUTOMATIC),
    "turns:automatic-success-after-refusal": (_DONE, _stop("refusal"), _AUTOMATIC),
    "turns:automatic-success-after-unknown-stop-reason": (_stop("invented_by_a_future_cli"), _AUTOMATIC),
    "turns:automatic-failure-after-success": (_DONE, {**_AUTOMATIC, "stop_reason": "refusal"}),
}


def iteration_end(state: str) -> EndVerdict:
    """The class the action gives the iteration whose turns are ``TURN_LINES[state]`` (exit 0)."""
    deciding = None
    for line in TURN_LINES[state]:
        deciding = verdict.judged_turn(deciding, parse_result(line))
    return verdict.process_verdict(cancelled=False, timed_out=False, exit_code=0, last=deciding)
