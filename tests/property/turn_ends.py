"""End states of the receipt-promise machine drawn as the turns of an iteration (issue 27;
docs/runtimes.md "Which end counts"): the ``result`` lines Claude Code writes for each turn, the
automatic ones (``origin.kind`` ``task-notification``) included.  The run's end class comes from
the real parser and the real turn judgment (looked up on ``verdict`` at call time, so a mutation
can patch it); the oracle is that none of these is success.

Issue 43 adds :data:`STREAM_ENDS`: whole stdout streams of a Claude iteration that end in success
by every ``result`` but leave the work unproven (delegated work stopped, a refusal, a turn nobody
judged), read by the real parser through the real live pump and its turn judgment
(:func:`stream_end`); and :data:`LOST_ENDS`, a session lost as the runtime reports it.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fullsend.adapters.runtimes import verdict
from fullsend.adapters.runtimes.claude.metrics import ClaudeSteerAggregator
from fullsend.adapters.runtimes.claude.runtime import ClaudeDialect
from fullsend.adapters.runtimes.claude.stream import CLAUDE_INCOMPLETE, ClaudeStreamParser, parse_result
from fullsend.adapters.runtimes.feed import SteerFeed
from fullsend.adapters.runtimes.liverun import ActiveRun
from fullsend.core.agent_end import EndVerdict
from fullsend.ports import AgentParams

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


class _Clock:
    """A fixed ``now`` (the parser stamps acknowledgements with it)."""

    def now(self) -> datetime:
        return datetime(2026, 9, 3, 10, 0, tzinfo=UTC)


_CLOCK = _Clock()


def _replay(text: str = "Review the pull request.") -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, "isReplay": True}


def _said(text: str = "Done.", tool: dict[str, Any] | None = None) -> dict[str, Any]:
    content = [tool] if tool else [{"type": "text", "text": text}]
    return {"type": "assistant", "message": {"id": f"m-{text}", "content": content}, "parent_tool_use_id": None}


def _task(subtype: str, **fields: Any) -> dict[str, Any]:
    return {"type": "system", "subtype": subtype, "task_id": "a1", "task_type": "local_agent", **fields}


_READ = {"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": "secrets/key.pem"}}
_READ_REFUSED = {
    "type": "user",
    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_r", "is_error": True}]},
    "tool_result_meta": [{"id": "toolu_r", "permission_decision": {"decision": "reject"}}],
}
_OPENING = (_replay(), _said())
#: end state -> every stdout line of the iteration, each ``result`` a success (issue 43).
STREAM_ENDS: dict[str, tuple[dict[str, Any], ...]] = {
    "stream:sub-agent-stopped-at-the-wait": (
        _replay(),
        _task("task_started", description="fix it", is_backgrounded=True),
        _said(),
        _DONE,
        _task("task_notification", status="stopped"),
    ),
    "stream:sub-agent-running-at-the-end": (*_OPENING, _task("task_started", description="fix it"), _DONE),
    "stream:refusal-missing-from-permission-denials": (_replay(), _said(tool=_READ), _READ_REFUSED, _said(), _DONE),
    "stream:turn-the-cli-opened-cut-off": (*_OPENING, _DONE, _said("Also…")),
    "stream:more-turns-announced-at-the-end": (*_OPENING, {**_DONE, "queued_turn_count": 1}),
    "stream:more-turns-announced-by-a-turn-of-its-own": (
        *_OPENING,
        _DONE,
        _said("The task ended."),
        {**_DONE, "queued_turn_count": 2, "origin": {"kind": "task-notification"}},
    ),
    "stream:no-stop-reason-no-answer": (_replay(), {**_DONE, "num_turns": 0, "stop_reason": None}),
}
#: end state -> why the runtime lost the session (the runtime's own verdict, issue 43).
LOST_ENDS: dict[str, str] = {"lost:resume-in-another-thread": "the resume reported thread t-2, not t-1"}


def stream_end(state: str) -> EndVerdict:
    """The class the live driver gives the iteration whose stdout is ``STREAM_ENDS[state]`` (exit 0):
    the real parser, pump, refusal judgment (``expected_denials`` empty) and turn judgment."""
    params = AgentParams("sb", "claude", "p", Path("/work"), {}, True, 60.0)
    feed = SteerFeed(lambda command, timeout_s: ("", "", 0), "mailbox", "pid", _CLOCK)
    parser = ClaudeStreamParser(_CLOCK)
    run = ActiveRun(None, feed, _CLOCK, parser, lambda text: None, unexpected=ClaudeDialect().denial_judge(params))
    stdout = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in STREAM_ENDS[state]))
    run.pump(stdout, ClaudeSteerAggregator(), CLAUDE_INCOMPLETE, lambda at: None, lambda text: None)
    return verdict.process_verdict(cancelled=False, timed_out=False, exit_code=0, last=run.deciding_result)


def lost_end(state: str) -> EndVerdict:
    """The end a runtime reports for the lost session of ``LOST_ENDS[state]`` (``verdict.session_lost``)."""
    return verdict.session_lost(LOST_ENDS[state])
