"""The end of one agent process, whatever the CLI: cut short, exited, or the class of its turns.

The per-CLI tables classify each turn end (``<cli>/stream.py``); :func:`judged_turn` keeps, over
every turn of the iteration, the first that was not success (a later turn, one the CLI started by
itself included, never makes up for it); this module adds what the CLI cannot say about itself —
the action stopped it (cancel, timeout), it exited non-zero, or it exited without ever ending a
turn — in that order of precedence (docs/runtimes.md "Which end counts").
"""

from __future__ import annotations

from collections.abc import Sequence

from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.adapters.sandbox.shell import sanitize_output
from fullsend.core.agent_end import (
    RULE_DELEGATED_UNFINISHED,
    RULE_SESSION_LOST,
    RULE_TOOL_REFUSED,
    RULE_TURN_UNJUDGED,
    AgentEnd,
    EndVerdict,
)
from fullsend.core.final_word import ToolDenial, tool_label
from fullsend.ports import AgentRunResult

ERROR_TEXT_MAX = 500

CANCELLED = EndVerdict(AgentEnd.INTERRUPTED, "", "the run was cancelled and the agent stopped")
TIMED_OUT = EndVerdict(AgentEnd.LIMIT_REACHED, "", "the agent did not finish within its timeout and was stopped")
NO_TURN = EndVerdict(AgentEnd.PROTOCOL_BROKEN, "", "the agent exited without finishing a turn")
UNCLASSIFIED = EndVerdict(AgentEnd.PROTOCOL_BROKEN, "", "a turn end of the agent could not be classified")
#: What the ``::error::`` says for each end the action finds itself (docs/runtimes.md's tables).
DELEGATED_UNFINISHED_SAYS = "work the agent delegated did not finish"
TOOL_REFUSED_SAYS = "the agent was refused a tool that expected_denials does not list"
TURN_UNJUDGED_SAYS = "a turn of the agent was left unjudged"
SESSION_LOST_SAYS = "the agent session the run steered was lost"


def unreadable_output(why: str) -> ResultEvent:
    """The turn end owed for an output line that could not be read (``why``: which line): a turn
    end inside it cannot be judged, so the iteration is not success (protocol-broken)."""
    says = f"the agent wrote {why}, so a turn end in it could not be judged"
    return ResultEvent(
        is_error=True,
        error_message=says,
        subtype="unreadable-line",
        verdict=EndVerdict(AgentEnd.PROTOCOL_BROKEN, "unreadable-line", says),
    )


def delegated_unfinished(what: str) -> EndVerdict:
    """Work the agent delegated (``what``: which task, of which type, how it ended) was stopped,
    failed or still ran when the bounded wait ended (docs/rules.md#delegated-unfinished)."""
    return EndVerdict(AgentEnd.INTERRUPTED, "", DELEGATED_UNFINISHED_SAYS, what, RULE_DELEGATED_UNFINISHED)


def tool_refused(denials: Sequence[ToolDenial]) -> EndVerdict:
    """A turn in which the CLI refused ``denials`` (none of them matched by ``expected_denials``)
    (docs/rules.md#tool-refused)."""
    names = ", ".join(dict.fromkeys(tool_label(d.tool_name) for d in denials)) or "a tool"
    return EndVerdict(AgentEnd.AGENT_ERROR, "", TOOL_REFUSED_SAYS, names, RULE_TOOL_REFUSED)


def turn_unjudged(why: str) -> EndVerdict:
    """A turn the CLI opened that the action could not judge (``why``) (docs/rules.md#turn-unjudged)."""
    return EndVerdict(AgentEnd.PROTOCOL_BROKEN, "", TURN_UNJUDGED_SAYS, why, RULE_TURN_UNJUDGED)


def session_lost(why: str) -> EndVerdict:
    """The session the run steered did not go on (``why``) (docs/rules.md#session-lost)."""
    return EndVerdict(AgentEnd.PROTOCOL_BROKEN, "", SESSION_LOST_SAYS, why, RULE_SESSION_LOST)


def owed_end(verdict: EndVerdict) -> ResultEvent:
    """The turn end the action owes for an end it found itself (``verdict``, never a success): it
    decides the iteration through :func:`judged_turn` like any turn end that was not success."""
    return ResultEvent(
        is_error=True, error_message=verdict.message(), subtype=verdict.rule or verdict.reason, verdict=verdict
    )


def judged_turn(kept: ResultEvent | None, new: ResultEvent) -> ResultEvent:
    """The turn end that decides the iteration once ``new`` ended after ``kept`` (the decider so far).

    A ``kept`` turn that was not success (or could not be classified) stays: no later turn, the
    CLI's own included, turns it into success.  Otherwise ``new`` decides.
    """
    if kept is not None and (kept.verdict is None or not kept.verdict.succeeded):
        return kept
    return new


def process_verdict(
    *, cancelled: bool, timed_out: bool, exit_code: int, last: ResultEvent | None, stderr_tail: str = ""
) -> EndVerdict:
    """How one agent process ended; ``last`` is the deciding turn end (:func:`judged_turn` over all).

    Precedence: cancelled, timed out, the deciding turn's own failure (its class and reason, even
    when the CLI then exited non-zero), a non-zero exit (with the tail of stderr), no turn end
    at all, an unclassified turn end; otherwise success (every turn ended in success).
    """
    if cancelled:
        return CANCELLED
    if timed_out:
        return TIMED_OUT
    verdict = last.verdict if last is not None else None
    if verdict is not None and not verdict.succeeded:
        return verdict
    if exit_code != 0:
        tail = sanitize_output(stderr_tail)[-ERROR_TEXT_MAX:]
        return EndVerdict(AgentEnd.AGENT_ERROR, "", f"the agent exited with code {exit_code}", tail)
    if last is None:
        return NO_TURN
    return verdict if verdict is not None else UNCLASSIFIED


def error_text(verdict: EndVerdict) -> str:
    """The run's error line for a failed ``verdict`` ("" for success), safe for one log line."""
    return "" if verdict.succeeded else sanitize_output(verdict.message())[:ERROR_TEXT_MAX]


def launch_failed(text: str) -> AgentRunResult:
    """The result of an agent that could not be started (``exit_code`` -1; an agent error)."""
    return AgentRunResult(
        exit_code=-1, is_error=True, error=sanitize_output(text)[:ERROR_TEXT_MAX], end=AgentEnd.AGENT_ERROR
    )
