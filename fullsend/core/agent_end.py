"""How an agent iteration ended, in five classes (docs/runtimes.md "Terminal states").

Each runtime maps every terminal event shape its CLI emits to one :class:`AgentEnd` (the tables
sit next to the parsers, ``fullsend/adapters/runtimes/<cli>/stream.py``).  Only
:attr:`AgentEnd.SUCCESS` may lead to a receipt (docs/rules.md ``agent-error`` …
``protocol-broken``): every other class fails the run with one ``::error::`` naming the agent's
own reason, and no receipt.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class AgentEnd(StrEnum):
    """The class of an agent's end (values are the rule ids of docs/rules.md, "Agent end")."""

    SUCCESS = "success"
    AGENT_ERROR = "agent-error"
    LIMIT_REACHED = "limit-reached"
    INTERRUPTED = "interrupted"
    PROTOCOL_BROKEN = "protocol-broken"


#: Rule ids of the failing ends, written at the end of the run's ``::error::`` line.
RULE_AGENT_ERROR = "agent-error"
RULE_LIMIT_REACHED = "limit-reached"
RULE_INTERRUPTED = "interrupted"
RULE_PROTOCOL_BROKEN = "protocol-broken"
#: The CLI ``agent_cli`` points at is a version its runtime does not support (exit 2).
RULE_CLI_UNSUPPORTED = "cli-unsupported"
#: Which of Codex's transports (the live app-server or exec interrupt-and-resume) a run uses.
RULE_CODEX_TRANSPORT = "codex-transport"
AGENT_END_RULE_IDS = (RULE_AGENT_ERROR, RULE_LIMIT_REACHED, RULE_INTERRUPTED, RULE_PROTOCOL_BROKEN)
#: Ends no CLI line states, found by the action itself (issue 43; docs/rules.md "Agent end").  Each
#: is one of the five classes, and its own rule id closes the ``::error::`` line instead of the class.
#: Work the agent delegated (a sub-agent, a background task) was stopped, failed or still ran at the
#: end of the bounded wait (``delegated_wait_seconds``).
RULE_DELEGATED_UNFINISHED = "delegated-unfinished"
#: A tool call was refused in a turn and no ``expected_denials`` pattern covers it.
RULE_TOOL_REFUSED = "tool-refused"
#: A turn was opened and never judged: no terminal line for it before the output ended, a last
#: turn end announcing more turns, or an end that names no stop and carries no answer.
RULE_TURN_UNJUDGED = "turn-unjudged"
#: The session the run steered is not the one that went on (a resume in another thread, a sandbox
#: that did not come back): an update could have landed without its task.
RULE_SESSION_LOST = "session-lost"
FOUND_END_RULE_IDS = (RULE_DELEGATED_UNFINISHED, RULE_TOOL_REFUSED, RULE_TURN_UNJUDGED, RULE_SESSION_LOST)

_DETAIL_MAX = 300


@dataclass(frozen=True)
class TerminalState:
    """One row of a runtime's terminal-state table.

    ``shape`` is the CLI's terminal event as it writes it (documentation, e.g.
    ``result subtype=error_max_turns``); ``reason`` the key the parser looks up (the CLI's own
    word, e.g. ``error_max_turns``); ``end`` its class; ``says`` the sentence a person reads;
    ``rule`` the rule of an end the action finds itself (:data:`FOUND_END_RULE_IDS`), else ``""``.
    """

    shape: str
    reason: str
    end: AgentEnd
    says: str
    rule: str = ""


@dataclass(frozen=True)
class EndVerdict:
    """A classified end: the class, the agent's reason word, the sentence and the agent's detail.

    ``rule`` is one of :data:`FOUND_END_RULE_IDS` for an end the action found itself (its own rule
    id closes the ``::error::`` line), ``""`` for an end its class says all about.
    """

    end: AgentEnd
    reason: str
    says: str
    detail: str = ""
    rule: str = ""

    @property
    def succeeded(self) -> bool:
        """True only for outright success."""
        return self.end is AgentEnd.SUCCESS

    @property
    def rule_id(self) -> str:
        """The rule id of this end: ``rule`` when set, else the class; ``""`` for outright success."""
        return "" if self.succeeded else (self.rule or self.end.value)

    def message(self) -> str:
        """``<says> (<reason>)[: <detail>]``, e.g. "the agent stopped at its turn limit (error_max_turns)"."""
        text = f"{self.says} ({self.reason})" if self.reason else self.says
        detail = " ".join(self.detail.split())[:_DETAIL_MAX]
        return f"{text}: {detail}" if detail and detail not in text else text


def lookup(table: tuple[TerminalState, ...], reason: str) -> TerminalState | None:
    """The row of ``table`` whose ``reason`` is ``reason``, or None (an unknown shape)."""
    return next((row for row in table if row.reason == reason), None)


def verdict_of(table: tuple[TerminalState, ...], reason: str, detail: str = "", what: str = "end") -> EndVerdict:
    """Classify ``reason`` through ``table``; a reason missing from it is :attr:`AgentEnd.PROTOCOL_BROKEN`.

    ``what`` names the field in the sentence for an unknown value ("an end the action does not
    know (<what> <reason>)").
    """
    row = lookup(table, reason)
    if row is None:
        return EndVerdict(
            AgentEnd.PROTOCOL_BROKEN,
            f"{what} {reason or '(none)'}",
            "the agent ended in a way the action does not know",
            detail,
        )
    return EndVerdict(row.end, row.reason, row.says, detail)
