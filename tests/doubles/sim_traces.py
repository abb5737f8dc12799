"""Burst traces on the simulator, replayed under the steer + receipt policy (bench/policies.py).

A trace is a list of :class:`TraceEvent` (an authorized ``/fs-review`` comment, or a push) at
offsets in seconds from the dispatch of run A (FIX's run, spec/watcher.md §16.0, PR #7).  Each
event is written into the simulator as GitHub would show it: the comment (or the head move), the
shim run it fires (run-name contract, spec/watcher.md §6) with its Route job in progress, and
``ROUTE_LAG_S`` later the Route job's success and the stage job ``dispatch / Review`` queued.

The stage jobs share one concurrency group with ``cancel-in-progress: false``
(receipt-preflight-tokens.md §9.2): one runs, at most one waits, and a newer waiting job
cancels the older one.  Under this policy each stage job that gets to run first makes the real
pre-flight receipt check (``fullsend.app.action.preflight.check_receipt``); if its run id is listed it
exits at once (a skipped run), otherwise it runs the agent with a real watcher
(:class:`~tests.doubles.sim_replay.ReplaySession`), and after an outright success posts the
real receipt (``post_receipt``) of what it absorbed (spec/receipt-preflight-tokens.md §3).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.preflight import PreflightFacts, check_receipt
from fullsend.app.action.receipt import post_receipt
from fullsend.app.watch.watcher import WatchConfig
from fullsend.core.model import Repo, format_time, parse_time
from fullsend.core.receipt.marker import marker_from
from fullsend.core.watch import settle
from fullsend.simulator.fixtures import (
    FIX_RUN_ID,
    JOB_TOKEN,
    ROLE_LOGIN,
    ROLE_TOKEN,
    STAGE_JOB,
    add_follow_up_run,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.sim_replay import ReplaySession, VirtualClock

ORIGIN = "2026-09-03T10:00:00Z"  # run A's creation (FIX)
ROUTE_LAG_S = 5.0  # a shim run's Route job concludes this long after the event
PR = 7


@dataclass(frozen=True)
class TraceEvent:
    """One event at ``at_s`` seconds after run A's dispatch: ``comment`` (``/fs-review <text>`` by
    ``login``) or ``push`` (the PR head moves; a ``pull_request_target`` shim run)."""

    at_s: float
    kind: str = "comment"
    login: str = "reviewer"
    text: str = "please re-check the migration"


@dataclass
class RunRecord:
    """One stage job of the trace's concurrency group and what became of it."""

    run_id: int
    event_at_s: float | None  # None for run A
    queued_at_s: float  # when its stage job entered the group
    stage_job_id: int = 0
    started_at_s: float | None = None
    ended_at_s: float | None = None
    outcome: str = "waiting"  # waiting | superseded | skipped | ran
    turns: int = 0
    steers: int = 0
    absorbed: tuple[int, ...] = ()
    settle_reason: str = ""
    settled_at_s: float | None = None

    @property
    def agent_s(self) -> float:
        return (self.ended_at_s - self.started_at_s) if self.outcome == "ran" and self.ended_at_s is not None \
            and self.started_at_s is not None else 0.0


@dataclass
class ReplayParams:
    """Policy knobs: the agent's turn (and what answering drained steers costs, default half a
    turn), the watcher's cadence and cap, the action's timeout."""

    turn_s: float = 300.0
    absorb_s: float | None = None
    poll_interval_s: float = 30.0
    max_steers: int = 2
    timeout_minutes: int = 30
    limit_s: float = 4 * 3600.0


@dataclass
class World:
    """The simulator, its virtual clock and the forge every run of one replay uses."""

    sim: GitHubSimulator
    clock: VirtualClock
    forge: GitHubForge
    fullsend_dir: str
    runs: dict[int, RunRecord] = field(default_factory=dict)
    logs: list[tuple[str, str]] = field(default_factory=list)

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))


def apply_event(world: World, event: TraceEvent, index: int) -> dict[str, Any]:
    """Write ``event`` into the simulator now; returns the shim run it fired (Route in progress)."""
    sim = world.sim
    if event.kind == "push":
        new_head = f"{index + 1:03d}" + "b" * 37
        sim.move_head(PR, new_head, files=[{"filename": f"src/step_{index}.py", "status": "modified",
                                            "additions": 3, "deletions": 1, "patch": "@@ -1 +1,3 @@\n-a\n+b\n+c\n+d"}])
        return add_follow_up_run(sim, event="pull_request_target", pull_requests=(PR,), actor="author",
                                 route="in_progress", stage_status=None)
    comment = sim.add_comment(PR, f"/fs-review {event.text}", event.login)
    return add_follow_up_run(sim, comment_id=comment["id"], actor=event.login, route="in_progress", stage_status=None)


def conclude_route(world: World, run_id: int) -> int:
    """The Route job succeeds and the stage job is queued behind the group; returns its job id."""
    sim = world.sim
    route = next(j for j in sim.jobs_of(run_id) if j["name"].endswith("/ Route"))
    sim.update_job(route["id"], status="completed", conclusion="success")
    return int(sim.add_job(run_id, STAGE_JOB, "queued")["id"])


def make_world(sim: GitHubSimulator, clock: VirtualClock, fullsend_dir: str) -> World:
    """Build FIX (run A created at the clock's origin) and a forge on the virtual clock."""
    standard_pr_scenario(sim, created_at=format_time(clock.origin))
    forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
    return World(sim, clock, forge, fullsend_dir)


def facts_for(world: World, run_id: int) -> PreflightFacts:
    """The pre-flight facts of stage run ``run_id`` (a minted role token, attempt 1, no providers)."""
    return PreflightFacts(stage="review", run_id_raw=str(run_id), run_attempt="1", repository="org/repo",
                          item_number=PR, job_token=JOB_TOKEN, role_token=ROLE_TOKEN, minted=True,
                          fullsend_dir=world.fullsend_dir, event_name="issue_comment")


def watch_config(clock: VirtualClock, run_id: int, params: ReplayParams, *, deadline: bool = True) -> WatchConfig:
    """The runner's watcher configuration for run ``run_id`` starting now (spec/watcher.md §13);
    ``deadline=False`` watches without one (an hour-long measurement)."""
    now = clock.now()
    return WatchConfig(
        run_id=run_id, run_name=f"org/repo#{PR}", item_number=PR,
        self_logins=frozenset({ROLE_LOGIN, "org-review[bot]", "fullsend-ai-review[bot]"}), started_at=now,
        deadline=settle.watch_deadline(now, params.timeout_minutes) if deadline else None,
        max_steers=params.max_steers, min_remaining=settle.min_remaining_for("claude"),
        poll_interval_s=params.poll_interval_s, stage_hints=("review", "review"))


@dataclass
class Replay:
    """What one trace did under steer + receipt: every stage run, and every request the simulator saw."""

    trace: tuple[TraceEvent, ...]
    runs: list[RunRecord]
    event_runs: list[int]  # the shim run each trace event fired, in trace order
    requests: list[Any]
    logs: list[tuple[str, str]]

    def absorbed(self) -> set[int]:
        return {rid for r in self.runs for rid in r.absorbed}

    def lost(self) -> list[int]:
        """Trace indexes whose event was neither absorbed nor seen by a run started after it (must be [])."""
        absorbed = self.absorbed()
        starts = [r.started_at_s for r in self.runs if r.outcome == "ran" and r.started_at_s is not None]
        return [i for i, (e, rid) in enumerate(zip(self.trace, self.event_runs, strict=False))
                if rid not in absorbed and not any(s >= e.at_s for s in starts)]


class _Group:
    """The stage jobs' concurrency group (one running, at most one waiting) under steer + receipt."""

    def __init__(self, world: World, params: ReplayParams) -> None:
        self.world, self.params = world, params
        self.active: tuple[RunRecord, ReplaySession] | None = None
        self.waiting: RunRecord | None = None

    def enqueue(self, record: RunRecord) -> None:
        """A stage job entered the group: run it now, or wait (cancelling an older waiting job)."""
        if self.active is None:
            self.begin(record)
            return
        if self.waiting is not None:
            self.waiting.outcome, self.waiting.ended_at_s = "superseded", self.world.clock.monotonic()
            self._job(self.waiting, "completed", "cancelled")
        self.waiting = record

    def begin(self, record: RunRecord) -> None:
        """Start ``record``: the receipt pre-flight, then the agent with its watcher."""
        world, t_s = self.world, self.world.clock.monotonic()
        record.started_at_s = t_s
        forge = _fresh_forge(world)  # a new process: no cached logins, no ETags
        if check_receipt(forge, facts_for(world, record.run_id), world.log) is not None:
            record.outcome, record.ended_at_s = "skipped", t_s
            self._job(record, "completed", "success")
            self._next()
            return
        self._job(record, "in_progress", None)
        session = ReplaySession(forge, world.clock, watch_config(world.clock, record.run_id, self.params),
                                self.params.turn_s, log=world.log, absorb_s=self.params.absorb_s)
        session.start(t_s)
        self.active = (record, session)

    def finish(self) -> None:
        """The active run's agent exited: post its receipt (outright success), free the group."""
        assert self.active is not None
        record, session = self.active
        record.outcome, record.ended_at_s = "ran", session.agent.exited_at_s
        record.turns, record.steers = session.agent.turns, len(session.agent.acked)
        record.settle_reason, record.settled_at_s = session.watcher.settle_reason, session.settled_at_s
        marker = marker_from(session.watcher.delivered, [m for m, _ in session.agent.acked], session.watcher.head)
        record.absorbed = marker.consumed
        if marker.consumed:
            post_receipt(session.watcher.forge, facts_for(self.world, record.run_id), marker, self.world.log)
        self._job(record, "completed", "success")
        self.active = None
        self._next()

    def _next(self) -> None:
        if self.waiting is not None and self.active is None:
            record, self.waiting = self.waiting, None
            self.begin(record)

    def _job(self, record: RunRecord, status: str, conclusion: str | None) -> None:
        self.world.sim.update_job(record.stage_job_id, status=status, conclusion=conclusion)
        if status == "completed":
            self.world.sim.update_workflow_run(record.run_id, status="completed", conclusion=conclusion)


def _fresh_forge(world: World) -> GitHubForge:
    sim = world.sim
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, world.clock)


def replay_steer_receipt(trace: Sequence[TraceEvent], params: ReplayParams | None = None) -> Replay:
    """Replay ``trace`` under steer + receipt on a fresh simulator and virtual clock (no sleeping)."""
    params = params or ReplayParams()
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    with GitHubSimulator(clock=clock.now) as sim, tempfile.TemporaryDirectory(prefix="fullsend-replay-") as tmp:
        world = make_world(sim, clock, tmp)
        group = _Group(world, params)
        record_a = RunRecord(FIX_RUN_ID, None, 0.0, stage_job_id=_stage_job(sim, FIX_RUN_ID))
        world.runs[FIX_RUN_ID] = record_a
        event_runs = _drive(world, group, list(trace), record_a)
        return Replay(tuple(trace), list(world.runs.values()), event_runs, sim.requests, list(world.logs))


def _stage_job(sim: GitHubSimulator, run_id: int) -> int:
    return int(next(j["id"] for j in sim.jobs_of(run_id) if j["name"] == STAGE_JOB))


def _drive(world: World, group: _Group, trace: list[TraceEvent], record_a: RunRecord) -> list[int]:
    """The event loop: trace events and Route conclusions first at each instant, then the session."""
    group.begin(record_a)
    due: list[tuple[float, int, int]] = sorted((e.at_s, 0, i) for i, e in enumerate(trace))  # (t, kind, index)
    event_runs: list[int] = [0] * len(trace)
    while True:
        session_at = group.active[1].next_at_s() if group.active else None
        times = [t for t in (due[0][0] if due else None, session_at) if t is not None]
        if not times or min(times) > group.params.limit_s:
            return event_runs
        t_s = min(times)
        world.clock.advance_to(t_s)
        while due and due[0][0] <= t_s:
            _, kind, index = due.pop(0)
            if kind == 0:
                run = apply_event(world, trace[index], index)
                event_runs[index] = int(run["id"])
                world.runs[int(run["id"])] = RunRecord(int(run["id"]), trace[index].at_s, t_s + ROUTE_LAG_S)
                due = sorted([*due, (t_s + ROUTE_LAG_S, 1, int(run["id"]))])
            else:
                record = world.runs[index]
                record.stage_job_id = conclude_route(world, index)
                group.enqueue(record)
        if group.active and (group.active[1].next_at_s() or float("inf")) <= t_s:
            group.active[1].step(t_s)
        if group.active and group.active[1].done:
            group.finish()
