"""What steering costs and saves: burst traces under five concurrency policies, one simulation (issue 22).

    PYTHONPATH=. python bench/policies.py [--turn-s 300] [--poll-s 30] [--max-steers 2]
                                          [--steer-s SECONDS] [--overhead-s 60] [--quick]

Prints one table and exits 0 (goals met or not: the verdicts are printed).  Each trace is a list of
events on PR #7 (an authorized ``/fs-review`` comment or a push) at seconds after run A was
dispatched; every event's shim run concludes its Route job ``ROUTE_LAG_S`` later and queues a
stage job in the item's concurrency group.  ``tests.doubles.concurrency_group`` simulates that group once
for all policies, on the simulator over HTTP and a virtual clock, with the same agent:

* ``cancel``   ``cancel-in-progress: true``: a queued stage job cancels the running one (its
               agent's work so far is thrown away) and starts at once.
* ``preserve`` ``cancel-in-progress: false`` without steering: the running job finishes, one job
               waits (a newer one cancels the older waiting one) and redoes the work.
* ``queue-max`` ``cancel-in-progress: false`` with ``queue: max`` and no steering: every queued
               job waits (up to 100, first in first out) and does the work in turn.
* ``steer``    preserve + steer + receipt: the real receipt pre-flight, the real watcher
               (``Watcher.watch`` on the virtual clock) and the real receipt post.
* ``steer-queue-max`` ``queue: max`` + steer + receipt (docs/rules.md#receipt-lists-my-run, "Queue"): every queued job
               waits its turn, then skips on a receipt or does the work.

Fixed before the results (not tuned): the agent is the scripted agent's ``boundary`` mode on
virtual time (``tests.doubles.virtual_replay.VirtualAgent``): a run's task is one turn of ``--turn-s``
(300 s); steers that arrive during a turn are consumed at its step boundary and answering them
costs ``--steer-s`` (default half a turn); a steer that reaches an idle agent costs a new turn.
Per-run overhead ``--overhead-s`` (60 s: runner pickup, checkout, container start, pre-flight;
assumed, not measured here) is charged to every job start, a run skipped on a receipt included.
Traces: the five below, the seed's "one run at the cap", and three Poisson bursts: events at
exponential gaps of mean ``BURST_MEAN_GAP_S`` (60 s) within the first ``BURST_WINDOW_S`` (600 s),
a push with probability 0.2 else a comment, seeds 1, 2, 3 (``random.Random``).

Columns: full agent runs (agent started from scratch, cancelled or not), agent turns, agent-minutes,
job starts, overhead + agent minutes, skipped runs (exited on a receipt), events absorbed as
steers, API requests of the action (counted / 304; the watcher and receipts: the two policies
without a watcher make none in this model).
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

from tests.doubles.burst_traces import ROUTE_LAG_S, Replay, ReplayParams, TraceEvent
from tests.doubles.concurrency_group import POLICIES, STEERING, replay

C, P = "comment", "push"
OVERHEAD_S = 60.0
BURST_MEAN_GAP_S, BURST_WINDOW_S, BURST_PUSH_SHARE, BURST_SEEDS = 60.0, 600.0, 0.2, (1, 2, 3)
TRACES: dict[str, list[TraceEvent]] = {
    # "One run at the cap", as issue 7 states it: two comments fold into steer 1, a push and
    # a comment into steer 2 (the cap), two later comments fall to the platform's pending slot.
    "one run at the cap (seed)": [
        TraceEvent(40, C),
        TraceEvent(45, C, "maintainer"),
        TraceEvent(100, P),
        TraceEvent(110, C),
        TraceEvent(200, C),
        TraceEvent(210, C, "maintainer"),
    ],
    "single late comment": [TraceEvent(250, C)],
    "comment storm, first poll window": [TraceEvent(3 + 3 * i, C, ("reviewer", "maintainer")[i % 2]) for i in range(6)],
    "pushes only": [TraceEvent(50, P), TraceEvent(55, P), TraceEvent(170, P)],
    "events outlast the run": [
        TraceEvent(60, C),
        TraceEvent(240, C),
        TraceEvent(330, C),
        TraceEvent(480, C),
        TraceEvent(620, C),
    ],
}


def burst(seed: int) -> list[TraceEvent]:
    """A Poisson burst: exponential gaps of mean ``BURST_MEAN_GAP_S`` within ``BURST_WINDOW_S``."""
    rng, t_s, events = random.Random(seed), 0.0, []
    while True:
        t_s += rng.expovariate(1 / BURST_MEAN_GAP_S)
        if t_s > BURST_WINDOW_S:
            return events
        kind = P if rng.random() < BURST_PUSH_SHARE else C
        events.append(TraceEvent(round(t_s, 1), kind, rng.choice(("reviewer", "maintainer"))))


def all_traces() -> dict[str, list[TraceEvent]]:
    """The fixed traces, then the seeded bursts."""
    return {**TRACES, **{f"Poisson burst, seed {s}": burst(s) for s in BURST_SEEDS}}


@dataclass
class Stats:
    """One policy on one trace (or a total)."""

    full_runs: int = 0
    turns: int = 0
    agent_s: float = 0.0
    starts: int = 0
    skipped: int = 0
    absorbed: int = 0
    counted: int = 0
    conditional: int = 0

    def add(self, other: Stats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def total_s(self, overhead_s: float) -> float:
        """Agent seconds plus ``overhead_s`` per job start."""
        return self.agent_s + self.starts * overhead_s


def stats_of(run: Replay) -> Stats:
    """Read one replay: runs whose agent started, their turns and time, job starts, skips, absorbed events, requests."""
    worked = [r for r in run.runs if r.outcome in ("ran", "cancelled")]
    absorbed = run.absorbed()
    return Stats(
        full_runs=len(worked),
        turns=sum(r.turns for r in worked),
        agent_s=sum(r.agent_s for r in worked),
        starts=sum(1 for r in run.runs if r.started_at_s is not None),
        skipped=sum(1 for r in run.runs if r.outcome == "skipped"),
        absorbed=sum(1 for rid in run.event_runs if rid in absorbed),
        counted=run.counted_requests,
        conditional=run.conditional_requests,
    )


def run_set(
    params: ReplayParams, traces: dict[str, list[TraceEvent]], policies: tuple[str, ...] = POLICIES
) -> dict[str, dict[str, tuple[Stats, Replay]]]:
    """Every trace under every policy: ``{trace: {policy: (stats, replay)}}``.  Raises
    ``AssertionError`` if a steer replay lost an event (never absorbed nor seen by a later run)."""
    out: dict[str, dict[str, tuple[Stats, Replay]]] = {}
    for name, trace in traces.items():
        out[name] = {}
        for policy in policies:
            run = replay(trace, params, policy)
            if policy in STEERING:
                assert run.lost() == [], f"{name}: events lost {run.lost()} under {policy}"
            out[name][policy] = (stats_of(run), run)
    return out


def totals(results: dict[str, dict[str, tuple[Stats, Replay]]]) -> dict[str, Stats]:
    """Per policy, the sum over the traces."""
    out: dict[str, Stats] = {}
    for per_policy in results.values():
        for policy, (st, _) in per_policy.items():
            out.setdefault(policy, Stats()).add(st)
    return out


def why(run: Replay, steer: Stats, kept: Stats, turn_s: float) -> str:
    """One sentence: why steer + receipt won or lost against preserve on this trace."""
    absorbed = run.absorbed()
    late = [e for e, rid in zip(run.trace, run.event_runs, strict=False) if rid not in absorbed]
    extra = steer.agent_s - steer.full_runs * turn_s  # what the steered turns added
    saved = kept.full_runs - steer.full_runs
    if not late:
        return (
            f"every event absorbed; {steer.skipped} queued run(s) skipped on the receipt, "
            f"{saved} full run(s) saved for {extra / 60:.1f} agent-min of steered turns"
        )
    stops = [
        f"{r.settle_reason} at {r.settled_at_s:.0f}s"
        for r in run.runs
        if r.outcome == "ran" and r.settled_at_s is not None and r.settle_reason
    ]
    return (
        f"events at {', '.join(f'{e.at_s:.0f}s' for e in late)} fell to a queued run "
        f"(watchers settled: {'; '.join(stops) or 'none'}); steered turns cost {extra / 60:.1f} agent-min, "
        f"{saved} full run(s) saved"
    )


def params_of(args: argparse.Namespace) -> ReplayParams:
    return ReplayParams(
        turn_s=args.turn_s, poll_interval_s=args.poll_s, max_steers=args.max_steers, absorb_s=args.steer_s
    )


def parser() -> argparse.ArgumentParser:
    """The knobs shared with ``bench/sensitivity.py``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--turn-s", type=float, default=300.0, help="the agent's turn (a run's task)")
    p.add_argument("--poll-s", type=float, default=30.0, help="poll_interval_seconds")
    p.add_argument("--max-steers", type=int, default=2)
    p.add_argument(
        "--steer-s",
        type=float,
        default=None,
        help="what answering the steers drained at a step boundary costs (default: half a turn)",
    )
    p.add_argument("--overhead-s", type=float, default=OVERHEAD_S, help="per job start (runner, checkout, container)")
    p.add_argument("--quick", action="store_true", help="accepted for bench/run_all.py; the same table")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    results = run_set(params_of(args), all_traces())
    total = totals(results)
    print_table(results, total, args.overhead_s)
    steer_s = args.turn_s / 2 if args.steer_s is None else args.steer_s
    print(
        f"\nAgent turn {args.turn_s:g} s, answering drained steers {steer_s:g} s, poll {args.poll_s:g} s, "
        f"max_steers {args.max_steers}, Route lag {ROUTE_LAG_S:g} s, overhead {args.overhead_s:g} s per job start."
        "  Steer + receipt against preserve (agent-min):"
    )
    for name, per in results.items():
        steer, kept = per["steer"][0], per["preserve"][0]
        verdict = "wins" if steer.agent_s < kept.agent_s else ("ties" if steer.agent_s == kept.agent_s else "LOSES")
        print(
            f"- {name}: steer + receipt {verdict} against preserve ({steer.agent_s / 60:.1f} vs "
            f"{kept.agent_s / 60:.1f} agent-min): {why(per['steer'][1], steer, kept, args.turn_s)}"
        )
    steer, kept, cancel = total["steer"], total["preserve"], total["cancel"]
    queued, steer_queued = total["queue-max"], total["steer-queue-max"]
    goals = [
        ("steer + receipt below preserve in agent-minutes over the set", steer.agent_s < kept.agent_s),
        (
            "steer + receipt below preserve in agent + overhead minutes over the set",
            steer.total_s(args.overhead_s) < kept.total_s(args.overhead_s),
        ),
        ("fewer full runs than half of cancel-in-progress over the set", steer.full_runs < cancel.full_runs / 2),
        (
            "with queue: max, steer + receipt below queue: max alone in agent-minutes over the set",
            steer_queued.agent_s < queued.agent_s,
        ),
    ]
    print("\nGoals: " + "; ".join(f"{text}: {'met' if ok else 'NOT met'}" for text, ok in goals))
    return 0


def print_table(
    results: dict[str, dict[str, tuple[Stats, Replay]]], total: dict[str, Stats], overhead_s: float
) -> None:
    width = max(len(name) for name in results)
    head = (
        f"{'trace':<{width}}  {'policy':<15}  {'full runs':>9}  {'turns':>5}  {'agent-min':>9}  {'starts':>6}  "
        f"{'+overhead':>9}  {'skipped':>7}  {'absorbed':>8}  {'API req (304)':>13}"
    )
    print(head)
    print("-" * len(head))

    def line(name: str, policy: str, st: Stats, events: int) -> None:
        absorbed = f"{st.absorbed}/{events}" if policy in STEERING else "-"
        print(
            f"{name:<{width}}  {policy:<15}  {st.full_runs:>9}  {st.turns:>5}  {st.agent_s / 60:>9.1f}  "
            f"{st.starts:>6}  {st.total_s(overhead_s) / 60:>9.1f}  {st.skipped:>7}  {absorbed:>8}  "
            f"{f'{st.counted} ({st.conditional})':>13}"
        )

    for name, per in results.items():
        for policy, (st, run) in per.items():
            line(name, policy, st, len(run.trace))
    print("-" * len(head))
    events = sum(len(next(iter(per.values()))[1].trace) for per in results.values())
    for policy, st in total.items():
        line("total", policy, st, events)


if __name__ == "__main__":
    raise SystemExit(main())
