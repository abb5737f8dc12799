"""How many concurrently watched runs one repository's job-token budget holds (issues 22, 33).

    PYTHONPATH=. python bench/scale.py [--quick]

GitHub gives a repository's ``GITHUB_TOKEN`` 1,000 REST requests per hour (``BUDGET_PER_H``); every
watched run lists the same shim runs with it.  For N watched runs, each with K authorized
comments per hour on its own item, one real watcher (``Watcher.watch`` over HTTP to the
simulator, virtual clock, the default poll interval and listing gate, no deadline,
``max_steers`` 1000 so it watches the whole hour, the agent's turn outlasting it) is run for one
hour while the simulator also receives the other N - 1 items' K events per hour (their shim runs
change the listing, so they break its ETag whenever the watcher lists).  The runs are alike, so
the repository spends N times one watcher's hour: this is still one watcher multiplied, not N
watchers at once (issue 33 asks for the latter; not built yet).  Requests are counted per token
(the simulator records each request's login): the job token's against the 1,000/h, the role
token's (the work-item reads) on their own budget.  Fixed before the results: K = 10, events
evenly spaced (own at (i + 1/2) x 3600/K s, the others' at (j + 1/4) x 3600/((N - 1) K) s), Route
lag 5 s.  "Unconditional" counts every request, 304s included.  Start and the receipt (a few
requests once per run) are not in the hour.  Goal: >= 20 watched runs within the job token's
budget at K = 10.  Exits 0 either way.
"""

from __future__ import annotations

import sys
import tempfile

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.core.scalars import parse_time
from fullsend.core.watch.settle import DEFAULT_POLL_INTERVAL_S
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_TOKEN, add_follow_up_run, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.burst_traces import (
    ORIGIN,
    ROUTE_LAG_S,
    ReplayParams,
    TraceEvent,
    World,
    apply_event,
    conclude_route,
    watch_config,
)
from tests.doubles.virtual_replay import ReplaySession, VirtualClock

BUDGET_PER_H, HOUR_S, K_PER_H, POLL_S, GOAL_N = 1000, 3600.0, 10, DEFAULT_POLL_INTERVAL_S, 20
FULL_N, QUICK_N = (1, 2, 5, 10, 20, 30, 50), (1, 10, 20)


def one_watcher_hour(n_runs: int, k_per_h: int) -> tuple[int, int, int]:
    """``(job-token counted, role-token counted, 304s)`` of one watcher's hour among ``n_runs``
    watched runs with ``k_per_h`` events each."""
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    with GitHubSimulator(clock=clock.now) as sim, tempfile.TemporaryDirectory() as tmp:
        fix = standard_pr_scenario(sim, created_at=ORIGIN)
        forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
        world = World(sim, clock, forge, tmp)
        session = ReplaySession(
            forge,
            clock,
            watch_config(clock, fix.my_run_id, ReplayParams(poll_interval_s=POLL_S, max_steers=1000), deadline=False),
            turn_s=2 * HOUR_S,
        )
        session.start(0.0)
        sim.reset_requests()
        own = [(HOUR_S * (i + 0.5) / k_per_h, "own", i) for i in range(k_per_h)]
        others = (n_runs - 1) * k_per_h
        due = sorted(
            own
            + [(t + ROUTE_LAG_S, "route", i) for t, _, i in own]
            + [(HOUR_S * (j + 0.25) / others, "other", j) for j in range(others)]
        )
        fired: dict[int, int] = {}
        for t_s, kind, i in due:  # at one instant the forge changes first, then the watcher acts
            session.run_until_done(t_s - 1e-6)
            clock.advance_to(t_s)
            if kind == "own":
                fired[i] = int(apply_event(world, TraceEvent(t_s), i)["id"])
            elif kind == "route":
                conclude_route(world, fired[i])
            else:
                add_follow_up_run(sim, pr=1000 + i % max(n_runs - 1, 1), route="success", stage_status="queued")
        session.run_until_done(HOUR_S)
        session.close()
        counted = [r for r in sim.requests if r.status != 304]
        job = sum(1 for r in counted if r.login == JOB_LOGIN)
        return job, len(counted) - job, sim.request_count(status=304)


def main(argv: list[str]) -> int:
    sizes = QUICK_N if "--quick" in argv else FULL_N
    print(
        f"{'watched runs N':>14}  {'events/h':>8}  {'one watcher job + role + 304':>28}  "
        f"{'repo job req/h':>14}  {'repo role req/h':>15}  {'unconditional':>13}"
    )
    print("-" * 102)
    fits = {"job": 0, "unconditional": 0}
    for n in sizes:
        job, role, free = one_watcher_hour(n, K_PER_H)
        repo_job, repo_role, unconditional = n * job, n * role, n * (job + role + free)
        for name, value in (("job", repo_job), ("unconditional", unconditional)):
            if value <= BUDGET_PER_H:
                fits[name] = max(fits[name], n)
        one = f"{job} + {role} + {free}"
        print(f"{n:>14}  {n * K_PER_H:>8}  {one:>28}  {repo_job:>14}  {repo_role:>15}  {unconditional:>13}")
    print(
        f"\nJob token: {BUDGET_PER_H} requests/hour per repository; the role token's reads are on its own "
        f"budget (an App installation's, 5,000/hour at least). K = {K_PER_H} events/hour per run, "
        f"poll {POLL_S:g} s, listing gate on."
    )
    print(
        f"Largest N measured within the job token's budget: {fits['job']} "
        f"(unconditional {fits['unconditional']}; N measured: {', '.join(map(str, sizes))})."
    )
    print(
        f"Goal >= {GOAL_N} watched runs within the budget at K = {K_PER_H}: "
        f"{'met' if fits['job'] >= GOAL_N else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
