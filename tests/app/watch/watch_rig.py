"""A watcher wired to the real GitHub simulator through the real adapter, plus a recording steerer.

FIX is built by ``fullsend.simulator.fixtures.standard_pr_scenario``: PR #7
at ``aaa111``, my run 33740015232 created 10:00:00Z, ``dispatch / Route`` and ``dispatch / Review``.
The clock starts at 10:10:00Z on FIX's day (after every candidate of the vectors) and runs at real
speed; the simulator stamps with the same clock, and the adapter's retry waits return at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import Carry, WatchConfig, Watcher
from fullsend.core.model import Repo
from fullsend.core.scalars import parse_time
from fullsend.core.watch.steer import SteerMessage
from fullsend.simulator.fixtures import (
    FIX_RUN_ID,
    JOB_TOKEN,
    ROLE_TOKEN,
    StandardScenario,
    add_follow_up_run,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator

CLOCK_ORIGIN = "2026-09-03T10:10:00Z"
CANDIDATE_AT = "2026-09-03T10:05:00Z"  # C(...)'s created_at in the vectors
LISTING = r"/actions/workflows/fullsend\.yml/runs$"
JOIN_S = 20.0  # generous bound on a watch that must end; never a timing assertion


def at(text: str) -> datetime:
    value = parse_time(text)
    assert value is not None
    return value


class SimClock:
    """``Clock`` for tests: wall time = ``origin`` + real elapsed (strictly increasing), real
    monotonic time, a ``sleep`` that returns at once (the adapter's retry backoff), and the
    system clock's ``wait`` and ``join`` (the watcher's waits, ended early by its inputs)."""

    def __init__(self, origin: str = CLOCK_ORIGIN) -> None:
        self._origin, self._t0 = at(origin), time.monotonic()
        self._last: datetime | None = None
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        with self._lock:
            value = self._origin + timedelta(seconds=time.monotonic() - self._t0)
            if self._last is not None and value <= self._last:
                value = self._last + timedelta(microseconds=1)
            self._last = value
            return value

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        return True

    def wait(self, wake: threading.Event, timeout_s: float) -> bool:
        return SystemClock().wait(wake, timeout_s)

    def join(self, thread: threading.Thread, timeout_s: float) -> bool:
        return SystemClock().join(thread, timeout_s)


@dataclass
class RecordingSteerer:
    """A Steerer that records every call in order; ``fail_next`` queues exceptions for coming steers.

    ``on_steer(msg)`` runs after a steer is accepted (e.g. to end the agent's turn)."""

    messages: list[SteerMessage] = field(default_factory=list)
    settles: list[str] = field(default_factory=list)
    calls: list[tuple[str, int]] = field(default_factory=list)
    fail_next: list[BaseException] = field(default_factory=list)
    settle_error: BaseException | None = None
    on_steer: Callable[[SteerMessage], None] | None = None
    steered: threading.Event = field(default_factory=threading.Event)

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        self.calls.append(("steer", msg.follow_up_run_id))
        if self.fail_next:
            raise self.fail_next.pop(0)
        self.messages.append(msg)
        self.steered.set()
        if self.on_steer:
            self.on_steer(msg)

    def settle(self, sandbox_name: str) -> None:
        self.calls.append(("settle", 0))
        self.settles.append(sandbox_name)
        if self.settle_error is not None:
            raise self.settle_error


@dataclass
class Rig:
    """Everything one test drives: the simulator, FIX, the forge, the steerer and a watcher factory."""

    sim: GitHubSimulator
    fix: StandardScenario
    clock: SimClock
    forge: GitHubForge
    steerer: RecordingSteerer
    logs: list[tuple[str, str]]
    timeline: Timeline

    def config(self, **overrides: Any) -> WatchConfig:
        fields: dict[str, Any] = dict(
            run_id=FIX_RUN_ID,
            run_name="org/repo#7",
            item_number=7,
            self_logins=frozenset({"fullsend-ai-review[bot]"}),
            started_at=at("2026-09-03T10:00:00Z"),
            deadline=None,
            max_steers=2,
            min_remaining=timedelta(minutes=5),
            poll_interval_s=3600.0,
            env_head_sha="aaa111",
            stage_hints=("review",),
        )
        fields.update(overrides)
        return WatchConfig(**fields)

    def watcher(self, carry: Carry | None = None, start: bool = True, **overrides: Any) -> Watcher:
        w = Watcher(
            self.forge,
            self.steerer,
            "sandbox-1",
            threading.Lock(),
            self.clock,
            self.config(**overrides),
            self.log,
            self.timeline,
            carry,
        )
        if start:
            w.start()
        return w

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def lines(self, needle: str = "", level: str | None = None) -> list[str]:
        return [m for lv, m in list(self.logs) if needle in m and (level is None or lv == level)]

    def accept(self, run_id: int, event: str = "pull_request_target", **fields: Any) -> dict[str, Any]:
        """An acceptable candidate C(run_id, event, pull_requests [7]) with ACCEPT_JOBS."""
        fields.setdefault("pull_requests", (7,))
        fields.setdefault("created_at", CANDIDATE_AT)
        return add_follow_up_run(self.sim, run_id=run_id, event=event, **fields)

    def listings(self) -> int:
        return self.sim.request_count("GET", LISTING)

    def job_reads(self, run_id: int) -> int:
        return self.sim.request_count("GET", rf"/actions/runs/{run_id}/jobs$")


def make_rig(sim: GitHubSimulator, clock: SimClock) -> Rig:
    fix = standard_pr_scenario(sim)
    forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
    return Rig(sim, fix, clock, forge, RecordingSteerer(), [], Timeline())


def run_watch(w: Watcher, turn_ends: int = 0) -> threading.Thread:
    """Start ``w.watch()`` on a thread after queueing ``turn_ends`` turn ends stamped now."""
    for _ in range(turn_ends):
        w.turn_ended(w.ports.clock.now())
    thread = threading.Thread(target=w.watch, daemon=True)
    thread.start()
    return thread


def finish(thread: threading.Thread) -> None:
    thread.join(JOIN_S)
    assert not thread.is_alive(), "the watch did not end"


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    """Wait (bounded) for a condition another thread brings about; fails the test if it never does."""
    deadline, pause = time.monotonic() + JOIN_S, threading.Event()
    while not predicate():
        assert time.monotonic() < deadline, f"never happened: {what}"
        pause.wait(0.005)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)
