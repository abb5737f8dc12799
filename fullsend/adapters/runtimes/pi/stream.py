"""pi rpc: input lines, the stdout parser, the terminal-state table and metrics (docs/architecture.md
"pi"; the pi 1.x rpc contract, docs/runtimes.md).

Input (WIRE): ``{"id":…,"type":"prompt","message":…[,"streamingBehavior":"steer"]}``.
Responses (WIRE): ``{"id":…,"type":"response","command":"prompt","success":true,
"data":{"disposition":"started"|"queued"|"handled"}}`` or ``"success":false``; responses to any
other command are ignored.  Only delivery is an ack: ``started`` is one; ``queued`` waits for the
delivery, which is the ``message_start`` of a user message with the prompt's text;
``handled`` (consumed by an input handler) and ``success:false`` never are.

Turn end: one ``ResultEvent`` per ``agent_settled`` in per-prompt (rpc) mode, carrying run-wide
totals (counters are never reset) and the cycle's class from :data:`PI_STOP_REASONS` (the
``stopReason`` of the last assistant message after the cycle's last delivered input: a steer
taken in mid-cycle must be answered, an answer that came before it does not count), unless
``agent_settled`` says ``aborted``; in default mode one result at EOF.  EOF after a new
``agent_start`` owes an ``incomplete`` (interrupted) result.  A result's ``final_message`` is
the text of the cycle's last assistant message that had text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fullsend.adapters.runtimes.claude.stream import compact_json
from fullsend.adapters.runtimes.events import (
    DELIVERED,
    QUEUED,
    REJECTED,
    AgentEvent,
    InitEvent,
    ResultEvent,
    TextEvent,
    TokensEvent,
    UserReplayEvent,
    as_float,
    as_int,
    as_str,
)
from fullsend.adapters.runtimes.feed import Now
from fullsend.core.agent_end import RULE_TURN_UNJUDGED, AgentEnd, EndVerdict, TerminalState, verdict_of

_E, _L, _I, _P = AgentEnd.AGENT_ERROR, AgentEnd.LIMIT_REACHED, AgentEnd.INTERRUPTED, AgentEnd.PROTOCOL_BROKEN
#: The last assistant message's ``stopReason`` (pi-ai ``StopReason``) → the class of its cycle.
PI_STOP_REASONS: tuple[TerminalState, ...] = (
    TerminalState("agent_settled after stopReason=stop", "stop", AgentEnd.SUCCESS, "the agent finished"),
    TerminalState("agent_settled after stopReason=length", "length", _L, "the model stopped at its output limit"),
    TerminalState("agent_settled after stopReason=error", "error", _E, "the model request failed"),
    TerminalState("agent_settled after stopReason=aborted", "aborted", _I, "the agent's turn was aborted"),
    TerminalState("agent_settled after stopReason=deferred", "deferred", _I, "the model deferred its answer"),
    TerminalState(
        "agent_settled after stopReason=toolUse", "toolUse", _P, "the agent settled with its tool calls unanswered"
    ),
    TerminalState(
        "agent_settled after stopReason=pending", "pending", _P, "the agent settled while its answer was still pending"
    ),
)
#: ``agent_settled`` with ``aborted: true`` (pi ≥ 1.1): the run was aborted, whatever its last message.
PI_SETTLED_ABORTED = TerminalState(
    "agent_settled aborted=true", "agent_settled aborted", _I, "the agent's run was aborted"
)
#: ``agent_settled`` of a cycle without any assistant message.
PI_NO_MESSAGE = TerminalState(
    "agent_settled without an assistant message", "no_message", _P, "the prompt settled without any assistant message"
)
#: ``agent_settled`` of a cycle whose last delivered input (a steer) got no assistant message after it.
PI_NO_ANSWER = TerminalState(
    "agent_settled without an assistant message after the last delivered input",
    "no_answer",
    _P,
    "the agent settled without answering the last input it took in",
    RULE_TURN_UNJUDGED,
)
#: EOF after ``agent_start`` and before its ``agent_settled``.
PI_INCOMPLETE = TerminalState(
    "EOF after agent_start, before agent_settled", "incomplete", _I, "the pi session ended before the prompt settled"
)
#: ``data.disposition`` of a successful ``prompt`` response → what it means for the ack.
PI_DISPOSITIONS = {"started": DELIVERED, "queued": QUEUED, "handled": REJECTED}


def pi_input_line(id: str, message: str, streaming_behavior: str = "") -> str:
    """One pi rpc ``prompt`` command (key order ``id, type, message, streamingBehavior``)."""
    obj: dict[str, str] = {"id": id, "type": "prompt", "message": message}
    if streaming_behavior:
        obj["streamingBehavior"] = streaming_behavior
    return compact_json(obj)


@dataclass
class _Prompt:
    """State of one agent_start … agent_settled cycle."""

    assistant_seen: bool = False  # since the last delivered input
    answered_once: bool = False  # any assistant message in the cycle
    error_message: str = ""
    stop_reason: str = ""
    aborted: bool = False
    final_text: str = ""  # the text of the cycle's last assistant message that had any


class PiStreamParser:
    """pi stdout → events.  ``per_prompt`` (rpc mode) emits a result per ``agent_settled``."""

    def __init__(self, clock: Now, per_prompt: bool = True) -> None:
        self._clock = clock
        self._per_prompt = per_prompt
        self._totals = [0, 0, 0, 0]  # input, output, cache_read, cache_write: run-wide
        self._cost = 0.0
        self._current: _Prompt | None = None
        self._last: _Prompt | None = None
        self.session_id = ""

    def parse(self, obj: dict[str, Any]) -> list[AgentEvent]:
        """Events for one stdout object (possibly none)."""
        kind = obj.get("type")
        if kind == "response":
            return self._response(obj)
        if kind == "session":
            self.session_id = self.session_id or as_str(obj.get("id"))
            return [InitEvent(session_id=self.session_id)]
        if kind == "agent_start":
            self._current = _Prompt()
        elif kind == "message_start":
            return self._user_message(obj.get("message"))
        elif kind == "message_end":
            return self._message_end(obj.get("message"))
        elif kind == "agent_settled":
            return self._settled(obj.get("aborted") is True)
        return []

    def _settled(self, aborted: bool) -> list[AgentEvent]:
        if self._current is not None:
            self._current.aborted = aborted
        if self._per_prompt and self._current is not None:
            done, self._current = self._current, None
            return [self._result(done)]
        self._last, self._current = self._current or self._last, None
        return []

    def finish(self) -> list[AgentEvent]:
        """At EOF: an ``incomplete`` result for a cycle that never settled; default mode's one result."""
        if self._current is not None:
            return [self._result(self._current, incomplete=True)]
        if not self._per_prompt and self._last is not None:
            return [self._result(self._last)]
        return []

    def _response(self, obj: dict[str, Any]) -> list[AgentEvent]:
        if obj.get("command") != "prompt":
            return []
        disposition = REJECTED
        if obj.get("success") is True:
            data = d if isinstance(d := obj.get("data"), dict) else {}
            # No disposition (pi < 0.99): accepted says nothing of delivery, so wait for it.
            disposition = PI_DISPOSITIONS.get(as_str(data.get("disposition")), QUEUED)
        return [UserReplayEvent(at=self._clock.now(), id=as_str(obj.get("id")), disposition=disposition)]

    def _user_message(self, message: object) -> list[AgentEvent]:
        """A user message starting is the delivery of the prompt or steer with that text."""
        if not isinstance(message, dict) or message.get("role") != "user":
            return []
        text = _text_of(message.get("content"))
        if self._current is not None:  # the cycle is judged by what answers this input, not what came before
            self._current.assistant_seen, self._current.stop_reason, self._current.error_message = False, "", ""
        return [UserReplayEvent(at=self._clock.now(), content=text)] if text else []

    def _message_end(self, message: object) -> list[AgentEvent]:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            return []
        usage = u if isinstance(u := message.get("usage"), dict) else {}
        parts = (usage.get("input"), usage.get("output"), usage.get("cacheRead"), usage.get("cacheWrite"))
        self._totals = [t + as_int(p) for t, p in zip(self._totals, parts, strict=True)]
        cost = usage.get("cost")
        self._cost += as_float(cost.get("total")) if isinstance(cost, dict) else 0.0
        current = self._current = self._current or _Prompt()
        current.assistant_seen = current.answered_once = True
        current.stop_reason = as_str(message.get("stopReason"))
        current.error_message = as_str(message.get("errorMessage"))
        text = _text_of(message.get("content")).strip()
        current.final_text = text or current.final_text
        tokens = TokensEvent(
            input=self._totals[0], output=self._totals[1], cache_read=self._totals[2], cache_write=self._totals[3]
        )
        return [TextEvent(text), tokens] if text else [tokens]

    def _result(self, prompt: _Prompt, incomplete: bool = False) -> ResultEvent:
        verdict = classify_prompt(
            prompt.stop_reason,
            prompt.assistant_seen,
            prompt.aborted,
            incomplete,
            prompt.error_message,
            prompt.answered_once,
        )
        return ResultEvent(
            num_turns=1,
            total_cost_usd=self._cost,
            is_error=not verdict.succeeded,
            error_message="" if verdict.succeeded else (prompt.error_message or verdict.says),
            subtype=verdict.reason,
            input_tokens=self._totals[0],
            output_tokens=self._totals[1],
            cache_read_input_tokens=self._totals[2],
            cache_creation_input_tokens=self._totals[3],
            verdict=verdict,
            final_message=prompt.final_text,
        )


def classify_prompt(
    stop_reason: str,
    assistant_seen: bool,
    aborted: bool,
    incomplete: bool,
    detail: str = "",
    answered_once: bool | None = None,
) -> EndVerdict:
    """The class of one prompt's cycle: EOF first, then ``aborted``, then the last ``stopReason``
    of an assistant message after the cycle's last delivered input (``assistant_seen``; none:
    no message at all, or none since the last steer when ``answered_once``)."""
    answered_once = assistant_seen if answered_once is None else answered_once
    for applies, row in (
        (incomplete, PI_INCOMPLETE),
        (aborted, PI_SETTLED_ABORTED),
        (not answered_once, PI_NO_MESSAGE),
        (not assistant_seen, PI_NO_ANSWER),
    ):
        if applies:
            return EndVerdict(row.end, row.reason, row.says, detail, row.rule)
    return verdict_of(PI_STOP_REASONS, stop_reason, detail, "stopReason")


def _text_of(content: object) -> str:
    """A pi message's text: a string content, or its text blocks joined by ``\\n``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(as_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text")


@dataclass
class PiAggregator:
    """pi results carry run-wide totals, so each one is *assigned*, never folded."""

    turns: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    def add_result(self, r: ResultEvent) -> None:
        """Take the run-wide totals of the latest per-prompt result."""
        self.turns += r.num_turns
        self.cost_usd, self.input_tokens, self.output_tokens = r.total_cost_usd, r.input_tokens, r.output_tokens

    def add_tokens(self, t: TokensEvent) -> None:
        """Snapshots are cumulative too: keep the highest seen."""
        self.input_tokens = max(self.input_tokens, t.input)
        self.output_tokens = max(self.output_tokens, t.output)
