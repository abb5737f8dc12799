"""The stage jobs' concurrency group, simulated once for every policy (bench/policies.py, issue 22).

GitHub runs the stage jobs of one item in one concurrency group.  The same group, the same
simulator, the same virtual clock and the same agent (``tests.doubles.virtual_replay.VirtualAgent``)
replay a trace under each policy; only what the group does with a newly queued job, and whether a
run steers, differs:

* ``cancel``   ``cancel-in-progress: true``: a queued job cancels the running one (its agent is
               cut short, the partial turn counts as a turn) and starts at once.  No watcher.
* ``preserve`` ``cancel-in-progress: false``, no steering: the running job finishes, at most one
               waits (a newer waiting job cancels the older one).  No watcher, no receipt.
* ``steer``    preserve + steer + receipt: a run that starts makes the real receipt pre-flight
               (``check_receipt``; listed ⇒ it exits at once, a skipped run), runs the agent with
               the real watcher (``ReplaySession``: ``Watcher.watch`` over HTTP on the virtual
               clock) and, after its agent exits, posts the real receipt (``post_receipt``) of
               what it absorbed.
* ``queue-max`` ``cancel-in-progress: false`` with ``queue: max``, no steering: up to
               :data:`QUEUE_MAX` jobs wait and run one after the other, first in first out.
* ``steer-queue-max`` ``queue: max`` + steer + receipt: every waiting job makes the receipt
               pre-flight when its turn comes; an absorbed one skips, the others run.

With ``queue: max`` a job entering a full queue is assumed to cancel the oldest waiting one, as
the one pending slot does; no trace here comes near 100 waiting jobs.

Every started stage job (ran, cancelled or skipped) is one job start: the runner's per-run
overhead (runner, checkout, container, pre-flight) is counted per job start by the benchmark.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.receipt import check_receipt, post_receipt
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import marker_from
from fullsend.core.scalars import parse_time
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_TOKEN, ROLE_TOKEN, STAGE_JOB
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.burst_traces import (
    ORIGIN,
    ROUTE_LAG_S,
    Replay,
    ReplayParams,
    RunRecord,
    TraceEvent,
    World,
    apply_event,
    conclude_route,
    facts_for,
    make_world,
    watch_config,
)
from tests.doubles.virtual_replay import ReplaySession, VirtualClock

POLICIES = ("cancel", "preserve", "queue-max", "steer", "steer-queue-max")
#: How many jobs ``queue: max`` lets wait in one concurrency group (GitHub's documented limit).
QUEUE_MAX = 100
STEERING = frozenset({"steer", "steer-queue-max"})


class Group:
    """One concurrency group under ``policy`` (one of :data:`POLICIES`): one running, at most one waiting."""

    def __init__(self, world: World, params: ReplayParams, policy: str) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}")
        self.world, self.params, self.policy = world, params, policy
        self.active: tuple[RunRecord, ReplaySession] | None = None
        self.waiting: list[RunRecord] = []
        self.capacity = QUEUE_MAX if policy.endswith("queue-max") else 1
        self.steers = policy in STEERING

    def enqueue(self, record: RunRecord) -> None:
        """A stage job entered the group: run it now, cancel the running one (``cancel``), or wait
        (a full queue cancels its oldest waiting job: the one slot of ``single``, or 100)."""
        if self.active is not None and self.policy == "cancel":
            self._cancel_active()
        if self.active is None:
            self.begin(record)
            return
        if len(self.waiting) >= self.capacity:
            oldest = self.waiting.pop(0)
            oldest.outcome, oldest.ended_at_s = "superseded", self.world.clock.monotonic()
            self._job(oldest, "completed", "cancelled")
        self.waiting.append(record)

    def begin(self, record: RunRecord) -> None:
        """Start ``record``: when steering, the receipt pre-flight first, then the agent (watched
        only when steering)."""
        world, t_s = self.world, self.world.clock.monotonic()
        record.started_at_s = t_s
        forge = _fresh_forge(world)  # a new process: no cached logins, no ETags
        if self.steers and check_receipt(forge, facts_for(world, record.run_id), world.log) is not None:
            record.outcome, record.ended_at_s = "skipped", t_s
            self._job(record, "completed", "success")
            self._next()
            return
        self._job(record, "in_progress", None)
        session = ReplaySession(
            forge,
            world.clock,
            watch_config(world.clock, record.run_id, self.params),
            self.params.turn_s,
            log=world.log,
            absorb_s=self.params.absorb_s,
        )
        if self.steers:
            session.start(t_s)
        else:  # no watcher: the agent does its task and exits
            session.agent.start(t_s)
            session.agent.settle("unwatched")
        self.active = (record, session)

    def finish(self) -> None:
        """The active run's agent exited: post its receipt (steering, something absorbed), free the group."""
        assert self.active is not None
        record, session = self.active
        record.outcome, record.ended_at_s = "ran", session.agent.exited_at_s
        record.turns, record.steers = session.agent.turns, len(session.agent.acked)
        record.settle_reason, record.settled_at_s = session.watcher.result().settle_reason, session.settled_at_s
        marker = marker_from(
            session.watcher.result().delivered, [m for m, _ in session.agent.acked], session.watcher.result().head
        )
        record.absorbed = marker.consumed
        if marker.consumed:
            post_receipt(session.watcher.ports.forge, facts_for(self.world, record.run_id), marker, self.world.log)
        self._job(record, "completed", "success")
        self.active = None
        self._next()

    def _cancel_active(self) -> None:
        """``cancel-in-progress``: the running job is cancelled now; a turn in progress counts."""
        assert self.active is not None
        record, session = self.active
        agent = session.agent
        record.outcome, record.ended_at_s = "cancelled", self.world.clock.monotonic()
        record.turns = agent.turns + (1 if agent.next_at_s() is not None else 0)
        session.close()
        self._job(record, "completed", "cancelled")
        self.active = None

    def _next(self) -> None:
        if self.waiting and self.active is None:
            self.begin(self.waiting.pop(0))

    def _job(self, record: RunRecord, status: str, conclusion: str | None) -> None:
        self.world.sim.update_job(record.stage_job_id, status=status, conclusion=conclusion)
        if status == "completed":
            self.world.sim.update_workflow_run(record.run_id, status="completed", conclusion=conclusion)


def _fresh_forge(world: World) -> GitHubForge:
    sim = world.sim
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, world.clock)


def replay(trace: Sequence[TraceEvent], params: ReplayParams | None = None, policy: str = "steer") -> Replay:
    """Replay ``trace`` under ``policy`` on a fresh simulator and virtual clock (no sleeping).
    Raises ``ValueError`` for an unknown policy."""
    params = params or ReplayParams()
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    with GitHubSimulator(clock=clock.now) as sim, tempfile.TemporaryDirectory(prefix="fullsend-replay-") as tmp:
        world = make_world(sim, clock, tmp)
        group = Group(world, params, policy)
        record_a = RunRecord(FIX_RUN_ID, None, 0.0, stage_job_id=_stage_job(sim, FIX_RUN_ID))
        world.runs[FIX_RUN_ID] = record_a
        event_runs = _drive(world, group, list(trace), record_a)
        if group.active is not None:
            group.active[1].close()
        return Replay(tuple(trace), list(world.runs.values()), event_runs, sim.requests, list(world.logs), policy)


def replay_steer_receipt(trace: Sequence[TraceEvent], params: ReplayParams | None = None) -> Replay:
    """``replay`` under steer + receipt."""
    return replay(trace, params, "steer")


def _stage_job(sim: GitHubSimulator, run_id: int) -> int:
    return int(next(j["id"] for j in sim.jobs_of(run_id) if j["name"] == STAGE_JOB))


def _drive(world: World, group: Group, trace: list[TraceEvent], record_a: RunRecord) -> list[int]:
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
