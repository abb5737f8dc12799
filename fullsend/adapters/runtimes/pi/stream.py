"""pi rpc: input lines, the stdout parser and metrics (docs/architecture.md "pi", probed on pi 0.84.4).

Input (WIRE): ``{"id":…,"type":"prompt","message":…[,"streamingBehavior":"steer"]}``.
Acks (WIRE): ``{"id":…,"type":"response","command":"prompt","success":true|false}``; responses
to any other command are ignored.  Turn end: one ``ResultEvent`` per ``agent_settled`` in
per-prompt (rpc) mode, carrying run-wide totals (counters are never reset); in default mode one
result at EOF.  EOF after a new ``agent_start`` owes an ``incomplete`` error result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fullsend.adapters.runtimes.claude.stream import compact_json
from fullsend.adapters.runtimes.events import (
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


def pi_input_line(id: str, message: str, streaming_behavior: str = "") -> str:
    """One pi rpc ``prompt`` command (key order ``id, type, message, streamingBehavior``)."""
    obj: dict[str, str] = {"id": id, "type": "prompt", "message": message}
    if streaming_behavior:
        obj["streamingBehavior"] = streaming_behavior
    return compact_json(obj)


@dataclass
class _Prompt:
    """State of one agent_start … agent_settled cycle."""

    assistant_seen: bool = False
    error_message: str = ""
    stop_reason: str = ""


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
        elif kind == "message_end":
            return self._message_end(obj.get("message"))
        elif kind == "agent_settled" and self._per_prompt and self._current is not None:
            done, self._current = self._current, None
            return [self._result(done)]
        elif kind == "agent_settled":
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
        rejected = obj.get("success") is not True
        return [UserReplayEvent(at=self._clock.now(), id=as_str(obj.get("id")), rejected=rejected)]

    def _message_end(self, message: object) -> list[AgentEvent]:
        if not isinstance(message, dict) or message.get("role") != "assistant":
            return []
        usage = u if isinstance(u := message.get("usage"), dict) else {}
        parts = (usage.get("input"), usage.get("output"), usage.get("cacheRead"), usage.get("cacheWrite"))
        self._totals = [t + as_int(p) for t, p in zip(self._totals, parts, strict=True)]
        cost = usage.get("cost")
        self._cost += as_float(cost.get("total")) if isinstance(cost, dict) else 0.0
        current = self._current = self._current or _Prompt()
        current.assistant_seen = True
        current.stop_reason = as_str(message.get("stopReason"))
        if current.stop_reason == "error":
            current.error_message = as_str(message.get("errorMessage")) or "the model request failed"
        else:
            current.error_message = ""
        text = _assistant_text(message)
        tokens = TokensEvent(input=self._totals[0], output=self._totals[1],
                             cache_read=self._totals[2], cache_write=self._totals[3])
        return [TextEvent(text), tokens] if text else [tokens]

    def _result(self, prompt: _Prompt, incomplete: bool = False) -> ResultEvent:
        if incomplete:
            is_error, message, subtype = True, "the pi session ended before the prompt settled", "incomplete"
        elif not prompt.assistant_seen:
            is_error, message, subtype = True, "the prompt settled without any assistant message", "no_message"
        else:
            is_error, message, subtype = bool(prompt.error_message), prompt.error_message, prompt.stop_reason
        return ResultEvent(
            num_turns=1, total_cost_usd=self._cost, is_error=is_error, error_message=message, subtype=subtype,
            input_tokens=self._totals[0], output_tokens=self._totals[1],
            cache_read_input_tokens=self._totals[2], cache_creation_input_tokens=self._totals[3],
        )


def _assistant_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, list):
        return ""
    return "\n".join(as_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text").strip()


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
