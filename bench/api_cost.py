"""What watching costs in GitHub API requests (issue 9).

    python bench/api_cost.py

Prints one table and exits 0.  The real watch loop (``Watcher.watch`` through
``GitHubForge`` over HTTP) polls the simulator on a virtual clock
(``tests.doubles.virtual_replay``) for one hour (no watch deadline; the agent's turn outlasts the
hour), at poll 5 s (the default), 10 s and 30 s, with the listing gate (docs/architecture.md
"Listing gate"), idle and with a burst (three authorized comments at minute 10, folded into one
steer, then quiet); "listings" counts the listings made (a gated tick whose gate is shut reads
the work item conditionally and lists nothing).  "Counted" requests are the ones GitHub charges
to the rate limit (the row names the job token's share, whose 1,000 per hour a repository's
watched runs share; the rest are the role token's); "conditional" are the ``304 Not Modified``
answers to ``If-None-Match`` polls, which it does not (docs/architecture.md "GitHub access").
"Unconditional" is what the same hour would cost if every 304 were a full answer.  Start (the
watcher's own run, its jobs, the PR and its labels) is reported once, apart from the hour.  The last rows are the queued
run's pre-flight: the requests it makes to decide whether a receipt lists it
(docs/architecture.md "Receipt reader": GraphQL's receipt view, then the role login;
``bench/skip_requests.py`` has the details).
"""

from __future__ import annotations

import tempfile

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.receipt import check_receipt, post_receipt
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import Marker
from fullsend.core.scalars import parse_time
from fullsend.core.watch.settle import DEFAULT_POLL_INTERVAL_S
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.burst_traces import (
    ORIGIN,
    ROUTE_LAG_S,
    ReplayParams,
    TraceEvent,
    World,
    apply_event,
    conclude_route,
    facts_for,
    watch_config,
)
from tests.doubles.virtual_replay import ReplaySession, VirtualClock

HOUR_S = 3600.0
BURST = [TraceEvent(600), TraceEvent(604, login="maintainer"), TraceEvent(608)]


def _forge(sim: GitHubSimulator, clock: VirtualClock) -> GitHubForge:
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)


def watch_hour(poll_s: float, burst: list[TraceEvent]) -> dict[str, int]:
    """One hour of watching; returns request counts for Start and for the hour."""
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    with GitHubSimulator(clock=clock.now) as sim, tempfile.TemporaryDirectory() as tmp:
        fix = standard_pr_scenario(sim, created_at=ORIGIN)
        world = World(sim, clock, _forge(sim, clock), tmp)
        session = ReplaySession(
            _forge(sim, clock),
            clock,
            watch_config(clock, fix.my_run_id, ReplayParams(poll_interval_s=poll_s), deadline=False),
            turn_s=2 * HOUR_S,
        )
        session.start(0.0)
        start = {"start_counted": sim.counted_request_count(), "start_conditional": sim.request_count(status=304)}
        sim.reset_requests()
        due = sorted(
            [(e.at_s, 0, i) for i, e in enumerate(burst)] + [(e.at_s + ROUTE_LAG_S, 1, i) for i, e in enumerate(burst)]
        )
        fired: dict[int, int] = {}
        for t_s, kind, i in due:  # at one instant the forge changes first, then the watcher acts
            session.run_until_done(t_s - 1e-6)
            clock.advance_to(t_s)
            if kind == 0:
                fired[i] = int(apply_event(world, burst[i], i)["id"])
            else:
                conclude_route(world, fired[i])
        session.run_until_done(HOUR_S)
        return {
            **start,
            "polls": session.polls,
            "steers": session.watcher.result().steers,
            "counted": sim.counted_request_count(),
            "job": sum(1 for r in sim.requests if r.status != 304 and r.login == JOB_LOGIN),
            "conditional": sim.request_count(status=304),
        }


def skip_decision(listed: bool) -> dict[str, int]:
    """The queued run's receipt check against an item with (or without) a receipt listing it."""
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    with GitHubSimulator(clock=clock.now) as sim, tempfile.TemporaryDirectory() as tmp:
        standard_pr_scenario(sim, created_at=ORIGIN)
        world = World(sim, clock, _forge(sim, clock), tmp)
        queued_id = 33740015300
        if listed:
            post_receipt(_forge(sim, clock), facts_for(world, 1), Marker((queued_id,), "aaa111"), world.log)
        sim.reset_requests()
        skipped = check_receipt(_forge(sim, clock), facts_for(world, queued_id), world.log) is not None
        assert skipped == listed
        return {"counted": sim.counted_request_count(), "conditional": sim.request_count(status=304)}


def main(argv: list[str] | None = None) -> int:
    rows = []
    for poll_s in (DEFAULT_POLL_INTERVAL_S, 10.0, 30.0):
        for name, burst in (("idle", []), ("burst at min 10", BURST)):
            r = watch_hour(poll_s, burst)
            rows.append(
                (
                    f"watch 1 h, poll {poll_s:g} s, {name} ({r['job']} job)",
                    r["polls"],
                    r["steers"],
                    r["counted"],
                    r["conditional"],
                    r["counted"] + r["conditional"],
                )
            )
    start = watch_hour(30.0, [])
    rows.append(
        (
            "watcher Start (once per run)",
            0,
            0,
            start["start_counted"],
            start["start_conditional"],
            start["start_counted"] + start["start_conditional"],
        )
    )
    for listed in (True, False):
        r = skip_decision(listed)
        what = "listed: skips" if listed else "not listed: works"
        rows.append(
            (f"queued run decides ({what})", 0, 0, r["counted"], r["conditional"], r["counted"] + r["conditional"])
        )
    head = f"{'what':<46}  {'listings':>8}  {'steers':>6}  {'counted':>7}  {'conditional (304)':>17}  "
    head += f"{'unconditional':>13}"
    print(head)
    print("-" * len(head))
    for what, polls, steers, counted, conditional, unconditional in rows:
        print(
            f"{what:<46}  {polls or '-':>8}  {steers or '-':>6}  {counted:>7}  {conditional:>17}  {unconditional:>13}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
