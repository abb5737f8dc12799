"""Claude Code stream-json: the input line, the output parser, the terminal-state table, metrics
(docs/architecture.md "Claude Code").

Input (WIRE): ``{"type":"user","message":{"role":"user","content":"<text>"}}`` on one line.
Output lines (WIRE): ``system/init``, ``assistant``, ``user`` (tool results and, with
``--replay-user-messages``, replays carrying ``isReplay: true``), ``result`` (one per turn).

A ``result`` is success only on positive proof (docs/runtimes.md "Claude Code"): every field that
can say how the turn ended says success — :data:`CLAUDE_RESULT_SUBTYPES` (``subtype`` with
``is_error``), :data:`CLAUDE_TERMINAL_REASONS` (``terminal_reason``, absent on older CLIs) and
:data:`CLAUDE_STOP_REASONS` (``stop_reason``, the model's last stop; absent or null allowed).  A
value missing from its table is protocol-broken, so a value a future CLI invents fails closed.
A replay of several queued messages folded into one user message carries one text block per
message (``parts``).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from fullsend.adapters.runtimes.claude.refusals import ToolCalls
from fullsend.adapters.runtimes.claude.tasks import TaskLedger, is_task_line
from fullsend.adapters.runtimes.events import (
    AgentEvent,
    FaultEvent,
    InitEvent,
    NoticeEvent,
    RefusalEvent,
    ResultEvent,
    TextEvent,
    TokensEvent,
    TurnOpenEvent,
    UserReplayEvent,
    as_float,
    as_int,
    as_str,
)
from fullsend.adapters.runtimes.feed import Now
from fullsend.adapters.runtimes.verdict import delegated_unfinished, turn_unjudged
from fullsend.core.agent_end import AgentEnd, EndVerdict, TerminalState, verdict_of
from fullsend.core.final_word import ToolDenial, tool_input_json

TOKEN_THRESHOLD = 5000  # tokens between two ``TokensEvent``s


def compact_json(obj: object) -> str:
    """One-line JSON as the mailbox needs it: compact, UTF-8, U+2028/U+2029 escaped."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def claude_input_line(text: str) -> str:
    """The stream-json user line for ``text`` (WIRE key order ``type``, ``message{role, content}``)."""
    return compact_json({"type": "user", "message": {"role": "user", "content": text}})


_E, _L, _I = AgentEnd.AGENT_ERROR, AgentEnd.LIMIT_REACHED, AgentEnd.INTERRUPTED
#: ``result.subtype`` → class (the CLI's result schema: one success and four error variants).
CLAUDE_RESULT_SUBTYPES: tuple[TerminalState, ...] = (
    TerminalState("result subtype=success is_error=false", "success", AgentEnd.SUCCESS, "the agent finished"),
    TerminalState("result subtype=success is_error=true", "success is_error", _E, "the agent reported an error"),
    TerminalState("result subtype=error_max_turns", "error_max_turns", _L, "the agent stopped at its turn limit"),
    TerminalState(
        "result subtype=error_max_budget_usd", "error_max_budget_usd", _L, "the agent stopped at its spending limit"
    ),
    TerminalState(
        "result subtype=error_max_structured_output_retries",
        "error_max_structured_output_retries",
        _L,
        "the agent ran out of structured-output retries",
    ),
    TerminalState(
        "result subtype=error_during_execution", "error_during_execution", _E, "the agent's turn failed while it ran"
    ),
)
#: ``result.terminal_reason`` → class (why the CLI's query loop ended; absent on older CLIs).
CLAUDE_TERMINAL_REASONS: tuple[TerminalState, ...] = (
    TerminalState("terminal_reason=completed", "completed", AgentEnd.SUCCESS, "the agent finished"),
    *(
        TerminalState(f"terminal_reason={r}", r, _L, says)
        for r, says in (
            ("max_turns", "the agent stopped at its turn limit"),
            ("budget_exhausted", "the agent stopped at its spending limit"),
            ("structured_output_retry_exhausted", "the agent ran out of structured-output retries"),
            ("blocking_limit", "the conversation reached the model's context limit"),
            ("prompt_too_long", "the prompt is too long for the model"),
        )
    ),
    *(
        TerminalState(f"terminal_reason={r}", r, _E, says)
        for r, says in (
            ("model_error", "the model failed"),
            ("api_error", "the model API returned an error"),
            ("image_error", "an image could not be sent to the model"),
            ("malformed_tool_use_exhausted", "the model kept sending malformed tool calls"),
            ("rapid_refill_breaker", "the agent's context refilled too fast and its breaker stopped it"),
            ("tool_deferred_unavailable", "a deferred tool was not available"),
            ("turn_setup_failed", "the agent's turn could not be set up"),
        )
    ),
    *(
        TerminalState(f"terminal_reason={r}", r, _I, says)
        for r, says in (
            ("aborted_streaming", "the agent's turn was aborted"),
            ("aborted_tools", "the agent's turn was aborted"),
            ("stop_hook_prevented", "a stop hook ended the agent's turn"),
            ("hook_stopped", "a hook stopped the agent"),
            ("tool_deferred", "the agent's turn stopped at a deferred tool call"),
            ("background_requested", "the agent's turn was sent to the background"),
        )
    ),
)
#: ``result.stop_reason`` → class (the Messages API's last ``stop_reason`` of the turn).
CLAUDE_STOP_REASONS: tuple[TerminalState, ...] = (
    TerminalState("stop_reason=end_turn", "end_turn", AgentEnd.SUCCESS, "the agent finished"),
    TerminalState("stop_reason=stop_sequence", "stop_sequence", AgentEnd.SUCCESS, "the agent finished"),
    TerminalState("stop_reason=max_tokens", "max_tokens", _L, "the model stopped at its output limit"),
    TerminalState(
        "stop_reason=model_context_window_exceeded",
        "model_context_window_exceeded",
        _L,
        "the conversation reached the model's context window",
    ),
    TerminalState("stop_reason=pause_turn", "pause_turn", _I, "the model paused its turn before it finished"),
    TerminalState("stop_reason=tool_use", "tool_use", _I, "the turn ended with the model's tool calls unanswered"),
    TerminalState("stop_reason=refusal", "refusal", _E, "the model refused to go on"),
)
#: Claude Code's output ended while the turn of an acknowledged message was still open (owed by
#: the live driver at EOF, which knows which replays acknowledged a message).
CLAUDE_INCOMPLETE = TerminalState(
    "EOF after a replay, before its result", "incomplete", _I, "the agent's output ended in the middle of a turn"
)


def classify_result(
    subtype: str, is_error: object, terminal_reason: str | None, stop_reason: str | None = None, detail: str = ""
) -> EndVerdict:
    """One ``result`` line's class: ``subtype`` (and ``is_error``), then ``terminal_reason``, then ``stop_reason``.

    Success needs ``subtype`` success with ``is_error`` exactly false, and ``terminal_reason`` and
    ``stop_reason`` each absent (None) or a success row.  An unknown value of any of them, or an
    ``is_error`` that is not a boolean, is protocol-broken naming the value.  A success whose
    ``terminal_reason`` or ``stop_reason`` is not a success takes that value's class; an
    execution error whose reason is an abort is interrupted.
    """
    if subtype == "success" and not isinstance(is_error, bool):
        return verdict_of((), json.dumps(is_error), detail, "is_error")
    key = "success is_error" if subtype == "success" and is_error else subtype
    verdict = verdict_of(CLAUDE_RESULT_SUBTYPES, key, detail, "subtype")
    if terminal_reason is not None:
        by_reason = verdict_of(CLAUDE_TERMINAL_REASONS, terminal_reason, detail, "terminal_reason")
        if verdict.succeeded or (verdict.end is _E and by_reason.end is _I):
            verdict = by_reason
    if verdict.succeeded and stop_reason is not None:
        by_stop = verdict_of(CLAUDE_STOP_REASONS, stop_reason, detail, "stop_reason")
        verdict = verdict if by_stop.succeeded else by_stop
    return verdict


def field_word(obj: dict[str, Any], key: str) -> str | None:
    """``obj[key]`` as a table key: None when absent or null, a string as is, any other JSON as its text."""
    value = obj.get(key)
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def replay_parts(message: object) -> tuple[str, ...]:
    """The texts a replayed message carries: its string content, or each of its text blocks."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return (content,)
    if isinstance(content, list):
        return tuple(as_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ()


def _main_thread(obj: dict[str, Any]) -> bool:
    """True for a line of the session's main thread, not a sub-agent's (``parent_tool_use_id`` null)."""
    return obj.get("parent_tool_use_id") is None


def _has_content(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") for b in content)


def unanswered(result: dict[str, Any], answered: bool) -> bool:
    """True when a ``result`` names no stop (``stop_reason`` null or absent) and its turn carried
    no message of the model (``answered`` false): nothing says the model ended the turn."""
    return result.get("stop_reason") is None and not answered


def announces_more_turns(result: dict[str, Any]) -> bool:
    """True when a ``result`` says more turns follow without further input (``queued_turn_count``)."""
    return as_int(result.get("queued_turn_count")) > 0


def opens_turn(obj: dict[str, Any]) -> bool:
    """True for a main-thread line that belongs to a turn (docs/rules.md#turn-unjudged): an assistant
    message, a stream event, a user line with an ``origin`` that is not a replay, or a ``running``
    session state."""
    kind = obj.get("type")
    if kind == "system":
        return obj.get("subtype") == "session_state_changed" and obj.get("state") == "running"
    if not _main_thread(obj):
        return False
    return kind in ("assistant", "stream_event") or (kind == "user" and "origin" in obj)


class ClaudeStreamParser:
    """Turns Claude stream-json objects into ``AgentEvent``s.

    A replay's ``at`` is the runner's own observation time (``clock.now()``), not the CLI's
    stamp, which is the time the line was queued.  Assistant usage is summed per
    distinct message id and a ``TokensEvent`` is emitted each time it grew by ≥ 5 000 tokens.

    Every turn is judged, whoever opened it (docs/runtimes.md "Claude Code"): a replay opens one
    (the feed holds an acknowledged input's turn open itself), and so does any line of the main
    thread (``parent_tool_use_id`` null) that belongs to a turn — an assistant message, a stream
    event, a user line with an ``origin`` that is not a replay, a ``running`` session state — with
    a ``TurnOpenEvent``; its ``result`` closes it when it is read.  The task lines go to a
    :class:`TaskLedger`, the tool calls to :class:`ToolCalls` (the refusals in later tool results:
    a ``RefusalEvent``).  :meth:`finish` owes, at EOF, an end for
    a turn the CLI opened and never ended, for a last ``result`` announcing more turns, and for
    delegated work that did not finish.
    """

    def __init__(self, clock: Now) -> None:
        self._clock = clock
        self._usage_by_message: dict[str, tuple[int, int, int, int]] = {}
        self._last_emitted_total = 0
        self._turn = ""  # "" none open; "input": opened by a consumed input line; "cli": by the CLI's own line
        self._answered = False  # a main-thread assistant message in the open turn
        self._more_turns = False  # the last result announced queued turns (queued_turn_count > 0)
        self.tasks = TaskLedger()
        self.calls = ToolCalls()

    def parse(self, obj: dict[str, Any]) -> list[AgentEvent]:
        """Events for one stdout object (possibly none)."""
        kind = obj.get("type")
        if kind == "user" and obj.get("isReplay") is True:
            self._open("input")  # the feed holds the turn of an acknowledged input open itself
            return self._replay(obj.get("message"))
        if kind == "result":
            return [self._result(obj)]
        if kind == "system" and obj.get("subtype") == "init":
            version = as_str(obj.get("claude_code_version"))
            return [InitEvent(as_str(obj.get("model")), version, as_str(obj.get("session_id")))]
        if is_task_line(obj):
            self.tasks.note(obj)
            return []
        opened = self._open("cli") if opens_turn(obj) else []
        if kind == "assistant":
            self.calls.note_assistant(obj.get("message"))
            self._answered = self._answered or (_main_thread(obj) and _has_content(obj))
            return opened + self._assistant(obj)
        if kind == "user":
            refused = tuple(self.calls.refusals(obj))
            return opened + ([RefusalEvent(refused)] if refused else [])
        return opened

    def finish(self) -> list[AgentEvent]:
        """Events owed at EOF: :data:`CLAUDE_INCOMPLETE` for a turn an input line opened, a
        ``turn-unjudged`` end for one the CLI opened or announced, ``delegated-unfinished`` for the
        delegated work that did not finish, and a notice per background shell still running or
        stopped."""
        owed: list[AgentEvent] = []
        if self._turn == "input":  # a consumed input line's turn, the agent's own lines included
            incomplete = CLAUDE_INCOMPLETE
            owed.append(FaultEvent(EndVerdict(incomplete.end, incomplete.reason, incomplete.says)))
        if self._turn == "cli":
            owed.append(FaultEvent(turn_unjudged("the output ended while a turn the CLI opened by itself was running")))
        if self._more_turns:
            owed.append(FaultEvent(turn_unjudged("the last turn end announced more turns, and the output ended first")))
        unfinished = self.tasks.unfinished()
        if unfinished:
            owed.append(FaultEvent(delegated_unfinished("; ".join(t.label() for t in unfinished))))
        owed += [
            NoticeEvent(f"The agent's background {t.label()} at its end; it does not change the outcome")
            for t in self.tasks.stopped_shells()
        ]
        return owed

    def _open(self, by: str) -> list[AgentEvent]:
        """Open a turn ``by`` a consumed input line or the CLI's own line; only the latter is
        announced (``TurnOpenEvent``): the feed keeps an acknowledged input's turn open by itself."""
        if self._turn:
            return []
        self._turn, self._answered, self._more_turns = by, False, False
        return [TurnOpenEvent()] if by == "cli" else []

    def _result(self, obj: dict[str, Any]) -> ResultEvent:
        """The turn's ``result``, judged when read: ``stop_reason`` null or absent is success only
        with an answer of the model in the turn (docs/rules.md#turn-unjudged)."""
        event = parse_result(obj)
        if event.verdict is not None and event.verdict.succeeded and unanswered(obj, self._answered):
            unjudged = turn_unjudged("the turn ended with no stop reason and no message of the model")
            event = replace(event, is_error=True, error_message=unjudged.message(), verdict=unjudged, final_message="")
        self._turn, self._answered = "", False
        self._more_turns = announces_more_turns(obj)
        return event

    def _replay(self, message: object) -> list[AgentEvent]:
        parts = replay_parts(message)
        if not any(parts):
            return []
        return [UserReplayEvent(at=self._clock.now(), content="\n".join(parts), parts=parts if len(parts) > 1 else ())]

    def _assistant(self, obj: dict[str, Any]) -> list[AgentEvent]:
        message = m if isinstance(m := obj.get("message"), dict) else {}
        events: list[AgentEvent] = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and as_str(block.get("text")).strip():
                events.append(TextEvent(as_str(block.get("text"))))
            elif block.get("type") == "tool_use":
                events.append(TextEvent(f"[tool] {as_str(block.get('name'))}"))
        tokens = self._note_usage(as_str(message.get("id")), message.get("usage"))
        return events + ([tokens] if tokens else [])

    def _note_usage(self, message_id: str, usage: object) -> TokensEvent | None:
        if not isinstance(usage, dict):
            return None
        self._usage_by_message[message_id] = (
            as_int(usage.get("input_tokens")),
            as_int(usage.get("output_tokens")),
            as_int(usage.get("cache_read_input_tokens")),
            as_int(usage.get("cache_creation_input_tokens")),
        )
        sums = [sum(u[i] for u in self._usage_by_message.values()) for i in range(4)]
        total = sum(sums)
        if total - self._last_emitted_total < TOKEN_THRESHOLD:
            return None
        self._last_emitted_total = total
        return TokensEvent(input=sums[0], output=sums[1], cache_read=sums[2], cache_write=sums[3])


def parse_result(obj: dict[str, Any]) -> ResultEvent:
    """A ``result`` line as a classified ``ResultEvent``.

    The error message is the ``errors`` list of an error variant, or ``result`` of a success
    that ``is_error``; empty for outright success.  ``final_message`` is ``result`` of a success
    that is not an error (the agent's answer); ``denials`` are the ``permission_denials`` items
    (``{tool_name, tool_use_id, tool_input}``), items without a tool name left out.
    """
    usage = u if isinstance(u := obj.get("usage"), dict) else {}
    subtype = as_str(obj.get("subtype"))
    errors = e if isinstance(e := obj.get("errors"), list) else []
    detail = "; ".join(as_str(x) for x in errors if as_str(x)) or (
        as_str(obj.get("result")) if obj.get("is_error") is True else ""
    )
    verdict = classify_result(
        subtype, obj.get("is_error"), field_word(obj, "terminal_reason"), field_word(obj, "stop_reason"), detail
    )
    return ResultEvent(
        num_turns=as_int(obj.get("num_turns")),
        total_cost_usd=as_float(obj.get("total_cost_usd")),
        is_error=not verdict.succeeded,
        error_message=detail if not verdict.succeeded else "",
        subtype=subtype,
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        reasoning_tokens=as_int(usage.get("reasoning_tokens")),
        cache_creation_input_tokens=as_int(usage.get("cache_creation_input_tokens")),
        cache_read_input_tokens=as_int(usage.get("cache_read_input_tokens")),
        verdict=verdict,
        final_message=as_str(obj.get("result")) if subtype == "success" and obj.get("is_error") is False else "",
        denials=permission_denials(obj.get("permission_denials")),
    )


def permission_denials(items: object) -> tuple[ToolDenial, ...]:
    """A ``result``'s ``permission_denials`` list as :class:`ToolDenial` records (anything that is
    not an object with a string ``tool_name`` is skipped)."""
    if not isinstance(items, list):
        return ()
    return tuple(
        ToolDenial(as_str(d.get("tool_name")), as_str(d.get("tool_use_id")), tool_input_json(d.get("tool_input")))
        for d in items
        if isinstance(d, dict) and as_str(d.get("tool_name"))
    )
