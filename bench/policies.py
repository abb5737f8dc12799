"""What steering costs and saves: burst traces under three concurrency policies (issue 9).

    python bench/policies.py [--turn-s 300] [--poll-s 30] [--max-steers 2] [--steer-s SECONDS]

Prints one table and exits 0.  Each trace is a list of events on PR #7 (an authorized
``/fs-review`` comment or a push) at seconds after run A was dispatched.  Every event's shim run
concludes its Route job ``ROUTE_LAG_S`` later and queues a stage job in the item's concurrency
group.  Policies:

* ``cancel``   ``cancel-in-progress: true``: each queued stage job cancels the running one (its
               agent work so far is thrown away) and starts at once.
* ``preserve`` ``cancel-in-progress: false`` without steering: the running job finishes, one job
               waits (a newer one cancels the older waiting one) and redoes the work from the
               item's current state.
* ``steer``    preserve + steer + receipt: every run that starts makes the real receipt
               pre-flight, runs the agent with the real watcher (``tests.doubles.sim_replay``:
               ``Watcher.watch``, its own loop and settle decisions, against the simulator over
               HTTP on a virtual clock), and posts the real receipt of what it absorbed; a waiting
               run listed in a receipt exits at once (a skipped run).

The agent is the scripted agent in ``boundary`` mode on virtual time: a run's task is one turn of
``--turn-s``; steers that arrive during a turn are consumed at its step boundary and cost half a
turn more (``--steer-s`` changes that cost); a steer that reaches an idle agent costs a new turn.  Under ``cancel`` and
``preserve`` (no watcher) a started run is one turn, cut short when cancelled.  Agent-minutes
count the agent's working time only (no checkout, no container start).

Columns: full agent runs (runs whose agent started from scratch, cancelled or not), agent turns
(``result`` events; a cancelled run's partial turn counts), agent-minutes, skipped runs (exited on
a receipt).  "Absorbed" is how many of the trace's events a running agent took in as a steer.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tests.doubles.sim_traces import ROUTE_LAG_S, Replay, ReplayParams, TraceEvent, replay_steer_receipt

C, P = "comment", "push"
TRACES: dict[str, list[TraceEvent]] = {
    # "One run at the cap", as issue 7 states it: two comments fold into steer 1, a push and
    # a comment into steer 2 (the cap), two later comments fall to the platform's pending slot.
    "one run at the cap (seed)": [TraceEvent(40, C), TraceEvent(45, C, "maintainer"), TraceEvent(100, P),
                                  TraceEvent(110, C), TraceEvent(200, C), TraceEvent(210, C, "maintainer")],
    "single late comment": [TraceEvent(250, C)],
    "comment storm, first poll window": [TraceEvent(3 + 3 * i, C, ("reviewer", "maintainer")[i % 2]) for i in range(6)],
    "pushes only": [TraceEvent(50, P), TraceEvent(55, P), TraceEvent(170, P)],
    "events outlast the run": [TraceEvent(60, C), TraceEvent(240, C), TraceEvent(330, C), TraceEvent(480, C),
                               TraceEvent(620, C)],
}


@dataclass
class Stats:
    """One policy on one trace."""

    full_runs: int = 0
    turns: int = 0
    agent_s: float = 0.0
    skipped: int = 0
    absorbed: int = 0

    def add(self, other: Stats) -> None:
        self.full_runs += other.full_runs
        self.turns += other.turns
        self.agent_s += other.agent_s
        self.skipped += other.skipped
        self.absorbed += other.absorbed


def queue_times(trace: list[TraceEvent]) -> list[float]:
    """When each event's stage job enters the concurrency group."""
    return sorted(e.at_s + ROUTE_LAG_S for e in trace)


def cancel_in_progress(trace: list[TraceEvent], turn_s: float) -> Stats:
    """Every queued stage job cancels the running one and starts at once."""
    stats = Stats(full_runs=1, turns=1)
    started, end = 0.0, turn_s
    for q in queue_times(trace):
        stats.agent_s += min(q, end) - started  # the running (or already finished) run's work
        started, end = q, q + turn_s
        stats.full_runs += 1
        stats.turns += 1
    stats.agent_s += end - started
    return stats


def preserve(trace: list[TraceEvent], turn_s: float) -> Stats:
    """The running job finishes; one waits (the newest); it redoes the work afterwards."""
    stats = Stats(full_runs=1, turns=1, agent_s=turn_s)
    end, waiting = turn_s, False
    for q in queue_times(trace):
        if waiting and end <= q:  # the waiting job started when the running one ended
            end, waiting = end + turn_s, False
            stats.full_runs, stats.turns, stats.agent_s = stats.full_runs + 1, stats.turns + 1, stats.agent_s + turn_s
        if end <= q:  # the group is idle: this job starts at once
            end = q + turn_s
            stats.full_runs, stats.turns, stats.agent_s = stats.full_runs + 1, stats.turns + 1, stats.agent_s + turn_s
        else:
            waiting = True
    if waiting:
        stats.full_runs, stats.turns, stats.agent_s = stats.full_runs + 1, stats.turns + 1, stats.agent_s + turn_s
    return stats


def steer_receipt(replay: Replay) -> Stats:
    """Read the real replay: runs that ran, their turns and agent time, receipt skips, absorbed events."""
    ran = [r for r in replay.runs if r.outcome == "ran"]
    absorbed = replay.absorbed()
    return Stats(full_runs=len(ran), turns=sum(r.turns for r in ran), agent_s=sum(r.agent_s for r in ran),
                 skipped=sum(1 for r in replay.runs if r.outcome == "skipped"),
                 absorbed=sum(1 for rid in replay.event_runs if rid in absorbed))


def why(name: str, replay: Replay, steer: Stats, kept: Stats, turn_s: float) -> str:
    """One sentence: why steer + receipt won or lost against preserve on this trace."""
    absorbed = replay.absorbed()
    late = [e for e, rid in zip(replay.trace, replay.event_runs, strict=False) if rid not in absorbed]
    extra = steer.agent_s - steer.full_runs * turn_s  # what the steered turns added
    saved = kept.full_runs - steer.full_runs
    if not late:
        return (f"every event absorbed; {steer.skipped} queued run(s) skipped on the receipt, "
                f"{saved} full run(s) saved for {extra / 60:.1f} agent-min of steered turns")
    stops = [f"{r.settle_reason} at {r.settled_at_s:.0f}s" for r in replay.runs
             if r.outcome == "ran" and r.settled_at_s is not None and r.settle_reason]
    return (f"events at {', '.join(f'{e.at_s:.0f}s' for e in late)} fell to a queued run "
            f"(watchers settled: {'; '.join(stops)}); steered turns cost {extra / 60:.1f} agent-min, "
            f"{saved} full run(s) saved")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turn-s", type=float, default=300.0, help="the agent's turn (a run's task)")
    parser.add_argument("--poll-s", type=float, default=30.0, help="poll_interval_seconds")
    parser.add_argument("--max-steers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="accepted for bench/run_all.py; the same table")
    parser.add_argument("--steer-s", type=float, default=None,
                        help="what answering the steers drained at a step boundary costs (default: half a turn)")
    args = parser.parse_args(argv)
    params = ReplayParams(turn_s=args.turn_s, poll_interval_s=args.poll_s, max_steers=args.max_steers,
                          absorb_s=args.steer_s)
    totals = {k: Stats() for k in ("cancel", "preserve", "steer")}
    rows, notes, absorbable_ok = [], [], True
    for name, trace in TRACES.items():
        replay = replay_steer_receipt(trace, params)
        assert replay.lost() == [], f"{name}: events lost {replay.lost()}"  # no event is ever lost
        stats = {"cancel": cancel_in_progress(trace, args.turn_s), "preserve": preserve(trace, args.turn_s),
                 "steer": steer_receipt(replay)}
        for policy, st in stats.items():
            totals[policy].add(st)
            rows.append((name, policy, st, len(trace)))
        win = stats["steer"].agent_s < stats["preserve"].agent_s
        all_absorbed = stats["steer"].absorbed == len(trace)
        absorbable_ok &= win or not all_absorbed
        verdict = "wins" if win else ("ties" if stats["steer"].agent_s == stats["preserve"].agent_s else "LOSES")
        notes.append(f"- {name}: steer + receipt {verdict} against preserve "
                     f"({stats['steer'].agent_s / 60:.1f} vs {stats['preserve'].agent_s / 60:.1f} agent-min): "
                     + why(name, replay, stats["steer"], stats["preserve"], args.turn_s))
    print_table(rows, totals, sum(len(t) for t in TRACES.values()))
    steer_s = args.turn_s / 2 if args.steer_s is None else args.steer_s
    print(f"\nAgent turn {args.turn_s:g} s, answering drained steers {steer_s:g} s, poll {args.poll_s:g} s, "
          f"max_steers {args.max_steers}, Route lag {ROUTE_LAG_S:g} s.  Steer + receipt against preserve:")
    print("\n".join(notes))
    steer, kept, cancel = totals["steer"], totals["preserve"], totals["cancel"]
    checks = [
        ("fewer agent-minutes than preserve over the set", steer.agent_s < kept.agent_s),
        ("fewer agent-minutes than preserve on every fully absorbed trace", absorbable_ok),
        ("fewer full runs than half of cancel-in-progress over the set", steer.full_runs < cancel.full_runs / 2),
    ]
    print("\nAcceptance (issue 9): " + "; ".join(f"{text}: {'yes' if ok else 'NO'}" for text, ok in checks))
    return 0


def print_table(rows: list[tuple[str, str, Stats, int]], totals: dict[str, Stats], events: int) -> None:
    width = max(len(r[0]) for r in rows)
    head = (f"{'trace':<{width}}  {'policy':<8}  {'full runs':>9}  {'turns':>5}  {'agent-min':>9}  "
            f"{'skipped':>7}  {'absorbed':>8}")
    print(head)
    print("-" * len(head))
    for name, policy, st, n in rows:
        absorbed = f"{st.absorbed}/{n}" if policy == "steer" else "-"
        print(f"{name:<{width}}  {policy:<8}  {st.full_runs:>9}  {st.turns:>5}  {st.agent_s / 60:>9.1f}  "
              f"{st.skipped:>7}  {absorbed:>8}")
    print("-" * len(head))
    for policy, st in totals.items():
        absorbed = f"{st.absorbed}/{events}" if policy == "steer" else "-"
        print(f"{'total':<{width}}  {policy:<8}  {st.full_runs:>9}  {st.turns:>5}  {st.agent_s / 60:>9.1f}  "
              f"{st.skipped:>7}  {absorbed:>8}")


if __name__ == "__main__":
    raise SystemExit(main())
