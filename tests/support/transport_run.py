"""Helpers for the transport tests (a module name unique across the test tree)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fullsend.core.watch.steer import SteerResult
from fullsend.ports import AgentParams, AgentRunResult

WAIT_S = 20.0  # a bound against hangs, never an assertion about speed


class FixedClock:
    """A clock whose ``now`` is fixed (feed unit tests)."""

    def __init__(self, now: datetime | None = None) -> None:
        self.value = now or datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.value


@dataclass
class RunThread:
    """Runs ``runtime.run(params, …)`` in a thread and records turn ends, output and the live
    acknowledgements (``(result, acknowledged, run_returned)``, as ``on_ack`` told them)."""

    runtime: Any
    params: AgentParams
    turn_ends: list[datetime] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    result: AgentRunResult | None = None
    turn_event: threading.Event = field(default_factory=threading.Event)
    on_turn: Callable[[datetime], None] | None = None
    acks: list[tuple[SteerResult, bool, bool]] = field(default_factory=list)
    on_ack: Callable[[SteerResult, bool], None] | None = None  # also told each acknowledgement

    def start(self) -> RunThread:
        self._thread = threading.Thread(target=self._go, daemon=True)
        self._thread.start()
        return self

    def _go(self) -> None:
        self.result = self.runtime.run(self.params, self._turn_end, self.output.append, self._ack)

    def _ack(self, result: SteerResult, acknowledged: bool) -> None:
        self.acks.append((result, acknowledged, self.result is not None))
        if self.on_ack:
            self.on_ack(result, acknowledged)

    def _turn_end(self, at: datetime) -> None:
        self.turn_ends.append(at)
        if self.on_turn:
            self.on_turn(at)
        self.turn_event.set()

    def wait_turns(self, n: int) -> None:
        for _ in range(int(WAIT_S * 100)):
            if len(self.turn_ends) >= n:
                return
            self.turn_event.wait(0.01)
            self.turn_event.clear()
        raise AssertionError(f"fewer than {n} turn ends")

    def join(self) -> AgentRunResult:
        self._thread.join(WAIT_S)
        assert not self._thread.is_alive(), "run did not return"
        assert self.result is not None
        return self.result


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    """Poll ``predicate`` until true (bounded by WAIT_S against hangs)."""
    ev = threading.Event()
    for _ in range(int(WAIT_S * 100)):
        if predicate():
            return
        ev.wait(0.01)
    raise AssertionError(f"never happened: {what}")


def read_log(path: Path) -> list[str]:
    """Texts the scripted agent consumed, in order."""
    if not path.exists():
        return []
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]
