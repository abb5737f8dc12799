"""The Claude Code ends the action finds itself, as rows of its terminal-state tables
(docs/runtimes.md "Claude Code"; issue 43): each is never success, and its own rule id
(docs/rules.md "Agent end") closes the run's ``::error::`` line.  The parser
(``claude/stream.py``) and the refusal judgment (``liverun.ActiveRun``) give these ends; the rows
are what the docs show of them.
"""

from __future__ import annotations

from fullsend.adapters.runtimes.verdict import DELEGATED_UNFINISHED_SAYS, TOOL_REFUSED_SAYS, TURN_UNJUDGED_SAYS
from fullsend.core.agent_end import (
    RULE_DELEGATED_UNFINISHED,
    RULE_TOOL_REFUSED,
    RULE_TURN_UNJUDGED,
    AgentEnd,
    TerminalState,
)

_I, _E, _P = AgentEnd.INTERRUPTED, AgentEnd.AGENT_ERROR, AgentEnd.PROTOCOL_BROKEN
CLAUDE_FOUND_ENDS: tuple[TerminalState, ...] = (
    TerminalState(
        "task_notification status other than completed, for delegated work",
        "task-unfinished",
        _I,
        DELEGATED_UNFINISHED_SAYS,
        RULE_DELEGATED_UNFINISHED,
    ),
    TerminalState(
        "EOF while delegated work has no task_notification",
        "task-running",
        _I,
        DELEGATED_UNFINISHED_SAYS,
        RULE_DELEGATED_UNFINISHED,
    ),
    TerminalState(
        "a refused call expected_denials does not cover, in permission_denials or a tool_result",
        "refused",
        _E,
        TOOL_REFUSED_SAYS,
        RULE_TOOL_REFUSED,
    ),
    TerminalState(
        "EOF in a turn the CLI opened by itself, before its result",
        "cli-turn-cut-off",
        _P,
        TURN_UNJUDGED_SAYS,
        RULE_TURN_UNJUDGED,
    ),
    TerminalState(
        "EOF after a result with queued_turn_count above 0",
        "more-turns",
        _P,
        TURN_UNJUDGED_SAYS,
        RULE_TURN_UNJUDGED,
    ),
    TerminalState(
        "result stop_reason=null or absent, in a turn with no assistant message",
        "unanswered",
        _P,
        TURN_UNJUDGED_SAYS,
        RULE_TURN_UNJUDGED,
    ),
)
