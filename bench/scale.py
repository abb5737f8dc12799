"""How many concurrently watched runs one repository's job-token budget holds (issues 22, 33).

    PYTHONPATH=. python bench/scale.py [--quick]

GitHub gives a repository's ``GITHUB_TOKEN`` 1,000 REST requests per hour (``BUDGET_PER_H``); every
watched run lists the same shim runs with it.  For each N of the grid (1 … 50; 1 and 5 with
``--quick``), N real watchers (``Watcher.watch`` over HTTP, each with its own forge and ETag
cache, as N runs have) watch N pull requests at once against ONE simulator on one virtual clock
for an hour: the default poll interval and listing gate, no deadline, ``max_steers`` 1000, the
agents' turns outlasting the hour.  Each item gets K = 10 authorized comments per hour, evenly
spaced and staggered across the items (watcher w's event i at (i + 1/2 + w/N) x 3600/K s); each
comment's shim run has its Route job succeed 5 s later (then its stage job is queued).  For a
watcher, the other N - 1 items' events are the activity elsewhere in the repository.  The
simulator records each request's login, so requests are counted per token: the job token's
(listings, jobs reads) against the 1,000/h, the role token's (work-item reads) on their own
budget; 304s are counted apart (free).  Start and the receipt (a few requests once per run) are
not in the hour.  The crossing is interpolated between the grid points around the budget.
Goal: >= 20 watched runs within the job token's budget at K = 10.  Exits 0 either way.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import replace

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.core.scalars import parse_time
from fullsend.core.watch.settle import DEFAULT_POLL_INTERVAL_S
from fullsend.simulator.fixtures import (
    JOB_LOGIN,
    JOB_TOKEN,
    ROLE_TOKEN,
    STAGE_JOB,
    add_follow_up_run,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.burst_traces import (
    ORIGIN,
    ROUTE_LAG_S,
    ReplayParams,
    watch_config,
)
from tests.doubles.virtual_replay import ReplaySession, VirtualClock

BUDGET_PER_H, HOUR_S, K_PER_H, POLL_S, GOAL_N = 1000, 3600.0, 10, DEFAULT_POLL_INTERVAL_S, 20
FIRST_PR, FIRST_RUN_ID = 100, 9_000_000_000
FULL_N, QUICK_N = (1, 2, 5, 10, 20, 30, 40, 50), (1, 5)


def n_watchers_hour(n_runs: int, k_per_h: int, hour_s: float = HOUR_S) -> tuple[int, int, int]:
    """``(job-token counted, role-token counted, 304s)`` of ``n_runs`` real watchers at once, one
    per pull request, against one simulator for ``hour_s`` virtual seconds, each item getting
    ``k_per_h`` authorized comments per hour (its shim run's Route succeeding ``ROUTE_LAG_S`` later)."""
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    with GitHubSimulator(clock=clock.now) as sim:
        sessions: list[ReplaySession] = []
        params = ReplayParams(poll_interval_s=POLL_S, max_steers=1000)
        for w in range(n_runs):
            pr = FIRST_PR + w
            fix = standard_pr_scenario(sim, pr=pr, my_run_id=FIRST_RUN_ID + w, created_at=ORIGIN)
            forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
            base = watch_config(clock, fix.my_run_id, params, deadline=False)
            config = replace(base, run_name=f"org/repo#{pr}", item_number=pr)
            sessions.append(ReplaySession(forge, clock, config, turn_s=2 * hour_s))
        for session in sessions:
            session.start(0.0)
            assert session.watching, session.start_error
        sim.reset_requests()
        due = _schedule(n_runs, k_per_h, hour_s)
        fired: dict[tuple[int, int], int] = {}
        for t_s, kind, w, i in due:  # at one instant the forge changes first, then the watchers act
            sessions[0].run_until_done(t_s - 1e-6)
            clock.advance_to(t_s)
            if kind == "own":
                comment = sim.add_comment(FIRST_PR + w, f"/fs-review step {i}", "reviewer")
                run = add_follow_up_run(
                    sim, comment_id=comment["id"], pr=FIRST_PR + w, route="in_progress", stage_status=None
                )
                fired[(w, i)] = int(run["id"])
            else:
                route = next(j for j in sim.jobs_of(fired[(w, i)]) if j["name"].endswith("/ Route"))
                sim.update_job(route["id"], status="completed", conclusion="success")
                sim.add_job(fired[(w, i)], STAGE_JOB, "queued")  # queued behind my run, as GitHub shows it
        sessions[0].run_until_done(hour_s)
        for session in sessions:
            session.close()
        counted = [r for r in sim.requests if r.status != 304]
        job = sum(1 for r in counted if r.login == JOB_LOGIN)
        return job, len(counted) - job, sim.request_count(status=304)


def _schedule(n_runs: int, k_per_h: int, hour_s: float) -> list[tuple[float, str, int, int]]:
    """``(t_s, "own" | "route", watcher, event)`` in time order: watcher w's event i at
    ``(i + 1/2 + w/n) x 3600/K`` s (staggered across watchers), its Route ``ROUTE_LAG_S`` later."""
    gap = HOUR_S / k_per_h
    own = [((i + 0.5 + w / n_runs) * gap, w, i) for w in range(n_runs) for i in range(k_per_h)]
    events = [(t, "own", w, i) for t, w, i in own] + [(t + ROUTE_LAG_S, "route", w, i) for t, w, i in own]
    return sorted(e for e in events if e[0] < hour_s)


def crossing(points: list[tuple[int, int]], budget: int) -> str:
    """Where the measured ``(N, requests/hour)`` curve first exceeds ``budget``: linear
    interpolation between the last grid point within it and the first beyond it."""
    for (n0, v0), (n1, v1) in itertools.pairwise(points):
        if v0 <= budget < v1:
            return f"about {n0 + (n1 - n0) * (budget - v0) / (v1 - v0):.0f}"
    if points and points[-1][1] <= budget:
        return f"beyond {points[-1][0]}"
    return f"below {points[0][0]}" if points else "unknown"


def main(argv: list[str]) -> int:
    sizes = QUICK_N if "--quick" in argv else FULL_N
    print(
        f"{'watched runs N':>14}  {'events/h':>8}  {'job req/h':>9}  {'role req/h':>10}  {'304s/h':>7}  {'job/run':>7}"
    )
    print("-" * 66)
    job_points: list[tuple[int, int]] = []
    for n in sizes:
        job, role, free = n_watchers_hour(n, K_PER_H)
        job_points.append((n, job))
        print(f"{n:>14}  {n * K_PER_H:>8}  {job:>9}  {role:>10}  {free:>7}  {job / n:>7.1f}")
    fits = max([n for n, v in job_points if v <= BUDGET_PER_H], default=0)
    print(
        f"\n{', '.join(map(str, sizes))} real watchers at once against one simulator for an hour, one per pull "
        f"request; K = {K_PER_H} events/hour per run, poll {POLL_S:g} s, listing gate on."
    )
    print(
        f"Job token ({BUDGET_PER_H} requests/hour per repository): largest N measured within it {fits}, "
        f"crossing {crossing(job_points, BUDGET_PER_H)}. The role token's reads are on its own budget."
    )
    print(
        f"Goal >= {GOAL_N} watched runs within the job token's budget at K = {K_PER_H}: "
        f"{'met' if fits >= GOAL_N else ('not measured (quick grid)' if max(sizes) < GOAL_N else 'NOT met')}"
    )
    print(
        f"GOAL scale.watched_runs_in_job_budget measured={fits}runs goal=>={GOAL_N}runs verdict="
        f"{'met' if fits >= GOAL_N else ('not measured' if max(sizes) < GOAL_N else 'not met')}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
