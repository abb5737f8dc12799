"""Claude Code stream-json: the input line, the output parser, the steered-run metrics
(docs/architecture.md "Claude Code").

Input (WIRE): ``{"type":"user","message":{"role":"user","content":"<text>"}}`` on one line.
Output lines (WIRE): ``system/init``, ``assistant``, ``user`` (tool results and, with
``--replay-user-messages``, replays carrying ``isReplay: true``), ``result`` (one per turn).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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

TOKEN_THRESHOLD = 5000  # Claude `tokenThreshold`: tokens between two TokensEvents


def compact_json(obj: object) -> str:
    """One-line JSON as the mailbox needs it: compact, UTF-8, U+2028/U+2029 escaped."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def claude_input_line(text: str) -> str:
    """The stream-json user line for ``text`` (WIRE key order ``type``, ``message{role, content}``)."""
    return compact_json({"type": "user", "message": {"role": "user", "content": text}})


def replay_content(message: object) -> str:
    """The text of a replayed message: a string, or the ``text`` of its text blocks joined by ``\\n``."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [as_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(texts)
    return ""


class ClaudeStreamParser:
    """Turns Claude stream-json objects into ``AgentEvent``s.

    A replay's ``at`` is the runner's own observation time (``clock.now()``), not the CLI's
    stamp, which is the time the line was queued.  Assistant usage is summed per
    distinct message id and a ``TokensEvent`` is emitted each time it grew by ≥ 5 000 tokens.
    """

    def __init__(self, clock: Now) -> None:
        self._clock = clock
        self._usage_by_message: dict[str, tuple[int, int, int, int]] = {}
        self._last_emitted_total = 0

    def parse(self, obj: dict[str, Any]) -> list[AgentEvent]:
        """Events for one stdout object (possibly none)."""
        kind = obj.get("type")
        if kind == "user" and obj.get("isReplay") is True:
            return [UserReplayEvent(at=self._clock.now(), content=replay_content(obj.get("message")))]
        if kind == "result":
            return [parse_result(obj)]
        if kind == "system" and obj.get("subtype") == "init":
            version = as_str(obj.get("claude_code_version"))
            return [InitEvent(as_str(obj.get("model")), version, as_str(obj.get("session_id")))]
        if kind == "assistant":
            return self._assistant(obj)
        return []

    def finish(self) -> list[AgentEvent]:
        """Events owed at EOF (none for Claude)."""
        return []

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
            as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens")),
            as_int(usage.get("cache_read_input_tokens")), as_int(usage.get("cache_creation_input_tokens")),
        )
        sums = [sum(u[i] for u in self._usage_by_message.values()) for i in range(4)]
        total = sum(sums)
        if total - self._last_emitted_total < TOKEN_THRESHOLD:
            return None
        self._last_emitted_total = total
        return TokensEvent(input=sums[0], output=sums[1], cache_read=sums[2], cache_write=sums[3])


def parse_result(obj: dict[str, Any]) -> ResultEvent:
    """A ``result`` line as a ``ResultEvent`` (``result`` is the error message when ``is_error``)."""
    usage = u if isinstance(u := obj.get("usage"), dict) else {}
    is_error = obj.get("is_error") is True
    return ResultEvent(
        num_turns=as_int(obj.get("num_turns")),
        total_cost_usd=as_float(obj.get("total_cost_usd")),
        is_error=is_error,
        error_message=as_str(obj.get("result")) if is_error else "",
        subtype=as_str(obj.get("subtype")),
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        reasoning_tokens=as_int(usage.get("reasoning_tokens")),
        cache_creation_input_tokens=as_int(usage.get("cache_creation_input_tokens")),
        cache_read_input_tokens=as_int(usage.get("cache_read_input_tokens")),
    )


@dataclass
class ClaudeSteerAggregator:
    """Metrics of a steered Claude run (``claudeSteerAggregator``).

    ``num_turns`` and usage are per turn → summed; ``total_cost_usd`` is cumulative → latest;
    reasoning is a running total → latest result's, never raised by a ``TokensEvent``; each token
    field reports ``max(sum of completed turns, latest snapshot)``.
    """

    turns: int = 0
    cost_usd: float = 0.0
    reasoning: int = 0
    _sums: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    _snapshot: TokensEvent = field(default_factory=TokensEvent)

    def add_result(self, r: ResultEvent) -> None:
        """Fold one turn's ``result``."""
        self.turns += r.num_turns
        self.cost_usd = r.total_cost_usd
        self.reasoning = r.reasoning_tokens
        parts = (r.input_tokens, r.output_tokens, r.cache_read_input_tokens, r.cache_creation_input_tokens)
        self._sums = [a + b for a, b in zip(self._sums, parts, strict=True)]

    def add_tokens(self, t: TokensEvent) -> None:
        """Remember the latest cumulative snapshot."""
        self._snapshot = t

    def _field(self, i: int) -> int:
        snap = (self._snapshot.input, self._snapshot.output, self._snapshot.cache_read, self._snapshot.cache_write)
        return max(self._sums[i], snap[i])

    @property
    def input_tokens(self) -> int:
        return self._field(0)

    @property
    def output_tokens(self) -> int:
        return self._field(1)
