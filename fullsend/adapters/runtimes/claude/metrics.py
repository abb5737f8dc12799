"""Metrics of a Claude Code run, turn by turn (docs/architecture.md "Claude Code")."""

from __future__ import annotations

from dataclasses import dataclass, field

from fullsend.adapters.runtimes.events import ResultEvent, TokensEvent


@dataclass
class ClaudeSteerAggregator:
    """Metrics of a steered Claude run.

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
