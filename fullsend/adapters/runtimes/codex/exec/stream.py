"""Codex ``exec --json`` events: the parser and the steered-run metrics (docs/architecture.md "Codex").

Events (WIRE): ``thread.started{thread_id}``, ``turn.started``, ``turn.completed{usage}``,
``turn.failed{error{message}}``, ``item.*{item}``, ``error{message}``.  What the steer queue
needs is published the moment it is read, not at EOF: every reported thread id
(``on_thread_id``; the queue tells the run's own thread from any other), the opening turn's
first item (``on_resumable``: from then on its thread can be resumed) and the terminal line
(``on_terminal``: the turn has ended, whenever the process exits).  Exactly one ``ResultEvent``
per process, at EOF, classified by :data:`CODEX_TERMINAL_STATES` (the CLI's ``exec_events.rs``
and its JSONL mapper: a turn ends in ``turn.completed`` or ``turn.failed``; an interrupted turn
writes neither; ``error`` is written for a retried error too, so a turn with one is never
proven a success), and a ``FaultEvent`` when a sub-agent the turn spawned (its
``collab_tool_call`` items, ``codex/delegated.py``) was not reported ``completed``: the process
ends its sub-agents with it.  An unreadable line (``note_unreadable``) makes the result protocol-broken
unless the turn already failed.  Its ``final_message`` is the text of the process's last
completed ``agent_message`` item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from fullsend.adapters.runtimes.codex.delegated import DelegatedWork
from fullsend.adapters.runtimes.codex.refusals import item_refusal
from fullsend.adapters.runtimes.events import (
    AgentEvent,
    FaultEvent,
    InitEvent,
    ResultEvent,
    TextEvent,
    TokensEvent,
    as_int,
    as_str,
)
from fullsend.adapters.runtimes.verdict import delegated_unfinished, unreadable_output
from fullsend.core.agent_end import AgentEnd, EndVerdict, TerminalState, lookup
from fullsend.core.final_word import ToolDenial

#: How one ``codex exec --json`` process can end → the class of its turn.
CODEX_TERMINAL_STATES: tuple[TerminalState, ...] = (
    TerminalState("turn.completed", "turn.completed", AgentEnd.SUCCESS, "the agent finished"),
    TerminalState("turn.failed", "turn.failed", AgentEnd.AGENT_ERROR, "the codex turn failed"),
    TerminalState(
        "turn.completed after an error event of the turn",
        "turn.completed after error",
        AgentEnd.AGENT_ERROR,
        "codex reported an error during the turn and still said completed",
    ),
    TerminalState(
        "turn.failed naming a usage, quota, budget or context-window limit",
        "turn.failed limit",
        AgentEnd.LIMIT_REACHED,
        "codex reached a usage or context limit",
    ),
    TerminalState(
        "EOF after turn.started, with neither turn.completed nor turn.failed",
        "incomplete",
        AgentEnd.INTERRUPTED,
        "the codex turn ended before it completed",
    ),
    TerminalState(
        "EOF after an error event and no turn.started",
        "error",
        AgentEnd.AGENT_ERROR,
        "codex reported an error before its turn",
    ),
    TerminalState("EOF without any turn or error event", "no_turn", AgentEnd.PROTOCOL_BROKEN, "codex wrote no turn"),
)
#: ``ResultEvent.subtype`` of a process that wrote no terminal line (the only kind of turn that can
#: have been stopped for a steer).
NO_TERMINAL_LINE = "incomplete"
#: Phrases of codex's own limit errors (its error texts: usage limit, quota, context window).
CODEX_LIMIT_PHRASES = ("usage limit", "quota exceeded", "context window", "budget exceeded")


def codex_verdict(reason: str, detail: str = "") -> EndVerdict:
    """The verdict of the row ``reason`` of :data:`CODEX_TERMINAL_STATES`, a limit if ``detail`` names one."""
    if reason == "turn.failed" and any(p in detail.lower() for p in CODEX_LIMIT_PHRASES):
        reason = "turn.failed limit"
    row = lookup(CODEX_TERMINAL_STATES, reason)
    assert row is not None, reason
    return EndVerdict(row.end, "turn.failed" if row.reason == "turn.failed limit" else row.reason, row.says, detail)


class CodexStreamParser:
    """Codex stdout → events; ``thread_id`` is the first non-empty ``thread.started`` id.

    ``on_thread_id(id)`` hears every reported thread id, ``on_resumable()`` the turn's first
    item, ``on_terminal()`` its terminal line, ``on_delegating(working)`` whether a sub-agent it
    spawned may still be working, after each collaboration item (see the module docstring).
    """

    def __init__(
        self,
        on_thread_id: Callable[[str], None] | None = None,
        on_resumable: Callable[[], None] | None = None,
        on_terminal: Callable[[], None] | None = None,
        on_delegating: Callable[[bool], None] | None = None,
    ) -> None:
        self._on_thread_id = on_thread_id
        self._on_resumable, self._on_terminal, self._on_delegating = on_resumable, on_terminal, on_delegating
        self.delegated = DelegatedWork()  # the sub-agents this process's turn spawned
        self.denials: list[ToolDenial] = []  # the tool calls codex refused in this process (``declined``)
        self.thread_id = ""
        self._terminal = ""  # "", "completed" or "failed"
        self._failure = ""
        self._last_error = ""
        self._turn_error = ""  # an ``error`` line of the running turn
        self._turn_started = False
        self._item_seen = False
        self._unreadable = ""  # why the first unreadable line could not be read
        self._final = ""  # the last agent_message item's text
        self._usage = [0, 0, 0, 0, 0]  # input, output, reasoning, cache_read, cache_write (high-water)

    def parse(self, obj: dict[str, Any]) -> list[AgentEvent]:
        """Events for one stdout object (possibly none)."""
        kind = as_str(obj.get("type"))
        if kind == "thread.started":
            return self._thread_started(as_str(obj.get("thread_id")))
        if kind == "turn.started":
            self._terminal, self._failure, self._turn_error, self._turn_started = "", "", "", True
        elif kind in ("turn.completed", "turn.failed"):
            self._turn_ended(kind, obj)
        elif kind == "error":
            self._last_error = as_str(obj.get("message")) or "an error event without a message"
            self._turn_error = self._last_error if self._turn_started else self._turn_error
        elif kind.startswith("item.") and self._turn_started:
            self._first_item()
            item = obj.get("item")
            if isinstance(item, dict) and item.get("type") == "collab_tool_call":
                self._collab(item)
            refused = item_refusal(item) if isinstance(item, dict) and kind == "item.completed" else None
            self.denials += [refused] if refused is not None else []
            return self._item(item) if kind == "item.completed" else []
        return []

    def _collab(self, item: dict[str, Any]) -> None:
        """A collaboration item of the turn: the sub-agents it spawned and their states."""
        self.delegated.note_collab_item(item)
        if self._on_delegating is not None:
            self._on_delegating(self.delegated.working())

    def note_unreadable(self, why: str) -> None:
        """An output line could not be read (``iter_json_lines``'s ``on_unreadable``)."""
        self._unreadable = self._unreadable or why

    def _turn_ended(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "turn.completed":
            self._terminal = "completed"
            self._note_usage(obj.get("usage"))
        else:
            error = e if isinstance(e := obj.get("error"), dict) else {}
            self._terminal, self._failure = "failed", as_str(error.get("message")) or "the turn failed"
        if self._on_terminal is not None:
            self._on_terminal()

    def _first_item(self) -> None:
        if not self._item_seen:
            self._item_seen = True
            if self._on_resumable is not None:
                self._on_resumable()

    def _thread_started(self, thread_id: str) -> list[AgentEvent]:
        if not thread_id:
            return []
        if self._on_thread_id is not None:
            self._on_thread_id(thread_id)
        if self.thread_id:
            return []
        self.thread_id = thread_id
        return [InitEvent(session_id=thread_id)]

    def _item(self, item: object) -> list[AgentEvent]:
        if isinstance(item, dict) and item.get("type") == "agent_message" and as_str(item.get("text")).strip():
            self._final = as_str(item.get("text"))
            return [TextEvent(self._final)]
        return []

    def _note_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        cached, cache_write = as_int(usage.get("cached_input_tokens")), as_int(usage.get("cache_write_input_tokens"))
        reasoning = as_int(usage.get("reasoning_output_tokens"))
        now = [
            max(0, as_int(usage.get("input_tokens")) - cached - cache_write),
            max(0, as_int(usage.get("output_tokens")) - reasoning),
            reasoning,
            cached,
            cache_write,
        ]
        self._usage = [max(a, b) for a, b in zip(self._usage, now, strict=True)]

    def finish(self) -> list[AgentEvent]:
        """The process's single result (clean, ``turn_failed``, ``incomplete`` or unreadable, see the
        table), then a ``FaultEvent`` when a sub-agent it spawned did not end ``completed`` (the
        process ends its sub-agents with it: codex exec cannot wait for them)."""
        unfinished = self.delegated.unfinished()
        fault: list[AgentEvent] = [FaultEvent(delegated_unfinished("; ".join(unfinished)))] if unfinished else []
        return [*self._result(), *fault]

    def _result(self) -> list[AgentEvent]:
        i, o, r, cr, cw = self._usage
        common: dict[str, Any] = dict(
            num_turns=1,
            final_message=self._final,
            input_tokens=i,
            output_tokens=o,
            reasoning_tokens=r,
            cache_read_input_tokens=cr,
            cache_creation_input_tokens=cw,
        )
        if self._terminal == "failed":
            verdict = codex_verdict("turn.failed", self._failure)
            return [
                ResultEvent(
                    is_error=True, error_message=self._failure, subtype="turn_failed", verdict=verdict, **common
                )
            ]
        if self._unreadable:
            return [replace(unreadable_output(self._unreadable), **common)]
        if self._terminal == "completed" and self._turn_error:
            verdict = codex_verdict("turn.completed after error", self._turn_error)
            return [
                ResultEvent(
                    is_error=True,
                    error_message=self._turn_error,
                    subtype="completed_after_error",
                    verdict=verdict,
                    **common,
                )
            ]
        if self._terminal == "completed":
            return [ResultEvent(subtype="success", verdict=codex_verdict("turn.completed"), **common)]
        reason = "incomplete" if self._turn_started else "error" if self._last_error else "no_turn"
        return [
            ResultEvent(
                is_error=True,
                error_message=self._last_error,
                subtype=NO_TERMINAL_LINE,
                verdict=codex_verdict(reason, self._last_error),
                **common,
            )
        ]


@dataclass
class CodexSteerAggregator:
    """Metrics of a steered Codex run: within a process results replace; at process end they are
    banked; across processes they add."""

    _banked: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    _current: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    cost_usd: float = 0.0

    def add_result(self, r: ResultEvent) -> None:
        """Replace the running process's figures with this (cumulative) result."""
        self._current = [r.num_turns, r.input_tokens, r.output_tokens, r.cache_read_input_tokens, r.reasoning_tokens]

    def add_tokens(self, t: TokensEvent) -> None:
        """Codex emits no mid-stream snapshots."""

    def process_ended(self) -> None:
        """Bank the ended process's figures."""
        self._banked = [a + b for a, b in zip(self._banked, self._current, strict=True)]
        self._current = [0, 0, 0, 0, 0]

    def _total(self, i: int) -> int:
        return self._banked[i] + self._current[i]

    @property
    def turns(self) -> int:
        return self._total(0)

    @property
    def input_tokens(self) -> int:
        return self._total(1)

    @property
    def output_tokens(self) -> int:
        return self._total(2)
