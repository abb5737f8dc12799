"""Burst traces on the simulator: the events, the world they are written into, the run records
(bench/policies.py; the concurrency group that replays them is ``tests.doubles.concurrency_group``).

A trace is a list of :class:`TraceEvent` (an authorized ``/fs-review`` comment, or a push) at
offsets in seconds from the dispatch of run A (FIX's run, PR #7).  Each
event is written into the simulator as GitHub would show it: the comment (or the head move), the
shim run it fires (the run-name contract, docs/architecture.md "Binding") with its Route job in progress, and
``ROUTE_LAG_S`` later the Route job's success and the stage job ``dispatch / Review`` queued.

The stage jobs share one concurrency group; ``tests.doubles.concurrency_group`` simulates it once for
every policy (cancel-in-progress, preserve, steer + receipt).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.watch.watcher import WatchConfig
from fullsend.core.model import Repo
from fullsend.core.scalars import format_time
from fullsend.core.watch import settle
from fullsend.simulator.fixtures import (
    JOB_TOKEN,
    ROLE_LOGIN,
    ROLE_TOKEN,
    STAGE_JOB,
    add_follow_up_run,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.virtual_replay import VirtualClock

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
    outcome: str = "waiting"  # waiting | superseded | skipped | ran | cancelled (its agent cut short)
    turns: int = 0
    steers: int = 0
    absorbed: tuple[int, ...] = ()
    settle_reason: str = ""
    settled_at_s: float | None = None

    @property
    def agent_s(self) -> float:
        return (
            (self.ended_at_s - self.started_at_s)
            if self.outcome in ("ran", "cancelled") and self.ended_at_s is not None and self.started_at_s is not None
            else 0.0
        )


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
        sim.move_head(
            PR,
            new_head,
            files=[
                {
                    "filename": f"src/step_{index}.py",
                    "status": "modified",
                    "additions": 3,
                    "deletions": 1,
                    "patch": "@@ -1 +1,3 @@\n-a\n+b\n+c\n+d",
                }
            ],
        )
        return add_follow_up_run(
            sim,
            event="pull_request_target",
            pull_requests=(PR,),
            actor="author",
            route="in_progress",
            stage_status=None,
        )
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
    """The pre-flight facts of stage run ``run_id`` (a minted role token, attempt 1, no providers).
    The replays measure queueing policies, not the receipt's proof: their runs write and read the
    unsigned form (``allow_unsigned_receipts``; the proof's cost is the skip's, bench/bench_start.py)."""
    return PreflightFacts(
        stage="review",
        run_id_raw=str(run_id),
        run_attempt="1",
        repository="org/repo",
        item_number=PR,
        job_token=JOB_TOKEN,
        role_token=ROLE_TOKEN,
        minted=True,
        fullsend_dir=world.fullsend_dir,
        event_name="issue_comment",
        allow_unsigned_receipts=True,
        proof_reads=False,
    )


def watch_config(clock: VirtualClock, run_id: int, params: ReplayParams, *, deadline: bool = True) -> WatchConfig:
    """The runner's watcher configuration for run ``run_id`` starting now;
    ``deadline=False`` watches without one (an hour-long measurement)."""
    now = clock.now()
    return WatchConfig(
        run_id=run_id,
        run_name=f"org/repo#{PR}",
        item_number=PR,
        self_logins=frozenset({ROLE_LOGIN, "org-review[bot]", "fullsend-ai-review[bot]"}),
        started_at=now,
        deadline=settle.watch_deadline(now, params.timeout_minutes) if deadline else None,
        max_steers=params.max_steers,
        min_remaining=settle.min_remaining_for("claude"),
        poll_interval_s=params.poll_interval_s,
        stage_hints=("review", "review"),
    )


@dataclass
class Replay:
    """What one trace did under steer + receipt: every stage run, and every request the simulator saw."""

    trace: tuple[TraceEvent, ...]
    runs: list[RunRecord]
    event_runs: list[int]  # the shim run each trace event fired, in trace order
    requests: list[Any]
    logs: list[tuple[str, str]]
    policy: str = "steer"

    @property
    def counted_requests(self) -> int:
        """Requests that cost primary rate limit (answered, not 304)."""
        return sum(1 for r in self.requests if r.status not in (0, 304))

    @property
    def conditional_requests(self) -> int:
        """``304 Not Modified`` answers (free of the primary rate limit)."""
        return sum(1 for r in self.requests if r.status == 304)

    def absorbed(self) -> set[int]:
        return {rid for r in self.runs for rid in r.absorbed}

    def lost(self) -> list[int]:
        """Trace indexes whose event was neither absorbed nor seen by a run started after it (must be [])."""
        absorbed = self.absorbed()
        starts = [r.started_at_s for r in self.runs if r.outcome == "ran" and r.started_at_s is not None]
        return [
            i
            for i, (e, rid) in enumerate(zip(self.trace, self.event_runs, strict=False))
            if rid not in absorbed and not any(s >= e.at_s for s in starts)
        ]
