"""The Codex ends the action finds itself, as rows of its terminal-state tables
(docs/runtimes.md "Codex"; issue 43): each is never success, and its own rule id (docs/rules.md
"Agent end") closes the run's ``::error::`` line.  The parsers (``exec/stream.py``,
``appserver/stream.py`` with ``appserver/delegation.py``), the exec loop and the refusal
judgment give these ends; the rows are what the docs show of them.
"""

from __future__ import annotations

from fullsend.adapters.runtimes.verdict import DELEGATED_UNFINISHED_SAYS, TOOL_REFUSED_SAYS
from fullsend.core.agent_end import (
    RULE_DELEGATED_UNFINISHED,
    RULE_SESSION_LOST,
    RULE_TOOL_REFUSED,
    AgentEnd,
    TerminalState,
)

#: What the exec loop says of a resume into another thread (``loop.py``'s lost session).
EXEC_SESSION_LOST_SAYS = "the agent session was lost during a steer interrupt; the queued run will redo the update"

CODEX_EXEC_FOUND_ENDS: tuple[TerminalState, ...] = (
    TerminalState(
        "turn end with a spawned sub-agent its collab_tool_call items last report not completed",
        "sub-agent-unfinished",
        AgentEnd.INTERRUPTED,
        DELEGATED_UNFINISHED_SAYS,
        RULE_DELEGATED_UNFINISHED,
    ),
    TerminalState(
        "command_execution status=declined that expected_denials does not cover",
        "refused",
        AgentEnd.AGENT_ERROR,
        TOOL_REFUSED_SAYS,
        RULE_TOOL_REFUSED,
    ),
    TerminalState(
        "thread.started of a resume naming another thread than the run's",
        "thread-lost",
        AgentEnd.INTERRUPTED,
        EXEC_SESSION_LOST_SAYS,
        RULE_SESSION_LOST,
    ),
)

CODEX_APP_SERVER_FOUND_ENDS: tuple[TerminalState, ...] = (
    TerminalState(
        "EOF with a sub-agent of the run whose last turn did not complete (or never started)",
        "sub-agent-unfinished",
        AgentEnd.INTERRUPTED,
        DELEGATED_UNFINISHED_SAYS,
        RULE_DELEGATED_UNFINISHED,
    ),
    TerminalState(
        "an item status=declined, or a request about a tool, that expected_denials does not cover",
        "refused",
        AgentEnd.AGENT_ERROR,
        TOOL_REFUSED_SAYS,
        RULE_TOOL_REFUSED,
    ),
)
