"""Issue 9 acceptance: an idle watch of 60 simulated minutes at poll 30 s costs 0 counted requests
after the first poll (simulator count; 304s are counted apart because they cost no rate limit).

The real ``Watcher`` — its own watch loop, polling through ``GitHubForge`` over HTTP — polls the
simulator on a virtual clock (``tests.doubles.virtual_replay``): 120 ticks of 30 s without waiting an
hour.  Each session is closed at the end (the watch is cancelled and settles).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.core.scalars import parse_time
from fullsend.simulator.fixtures import JOB_TOKEN, ROLE_TOKEN, add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.burst_traces import ORIGIN, ReplayParams, watch_config
from tests.doubles.virtual_replay import ReplaySession, VirtualClock

HOUR_S = 3600.0
LISTING = r"/actions/workflows/fullsend\.yml/runs$"
Setup = tuple[GitHubSimulator, VirtualClock, int, list[ReplaySession]]  # simulator, clock, my run, sessions to close


@pytest.fixture
def world() -> Iterator[Setup]:
    origin = parse_time(ORIGIN)
    assert origin is not None
    clock = VirtualClock(origin)
    sessions: list[ReplaySession] = []
    with GitHubSimulator(clock=clock.now) as sim:
        fix = standard_pr_scenario(sim, created_at=ORIGIN)
        try:
            yield sim, clock, fix.my_run_id, sessions
        finally:
            for session in sessions:
                session.close()


def _session(world: Setup, poll_s: float) -> ReplaySession:
    """A watcher over an agent busy for two hours, without a deadline (an hour of pure watching)."""
    sim, clock, run_id, sessions = world
    forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
    config = watch_config(clock, run_id, ReplayParams(poll_interval_s=poll_s), deadline=False)
    session = ReplaySession(forge, clock, config, turn_s=2 * HOUR_S)
    sessions.append(session)
    session.start(0.0)
    assert session.watching, session.start_error
    return session


@pytest.mark.parametrize(("poll_s", "polls"), [(30.0, 120), (10.0, 360)], ids=["poll-30s", "poll-10s"])
def test_an_idle_hour_costs_no_counted_request_after_the_first_poll(world: Setup, poll_s: float, polls: int) -> None:
    sim, clock = world[0], world[1]
    session = _session(world, poll_s)
    sim.reset_requests()  # Start's four reads (own run, its jobs, PR, issue) are not polls
    session.run_until_done(HOUR_S)
    assert session.polls == polls and clock.monotonic() == HOUR_S
    requests = sim.requests
    assert [r.path for r in requests] == [requests[0].path] * polls and requests[0].path.endswith("/fullsend.yml/runs")
    assert [r.status for r in requests] == [200] + [304] * (polls - 1)
    assert sim.counted_request_count() == 1  # the first poll
    first_tag = requests[0].headers.get("if-none-match")
    assert first_tag is None and {r.headers["if-none-match"] for r in requests[1:]} == {
        requests[1].headers["if-none-match"]
    }


def test_after_a_burst_is_absorbed_polling_is_free_again(world: Setup) -> None:
    sim = world[0]
    session = _session(world, 30.0)
    session.run_until_done(600.0)
    add_comment_follow_up(sim, "/fs-review please re-check the migration")
    session.run_until_done(630.0)  # the tick at 630 s reads and steers
    assert len(session.agent.pending) == 1 and session.watcher.result().steers == 1
    sim.reset_requests()
    session.run_until_done(HOUR_S)
    assert session.polls == 120
    assert sim.counted_request_count() == 0 and sim.request_count(status=304) == 99
    assert {r.path for r in sim.requests} == {sim.requests[0].path} and sim.request_count("GET", LISTING) == 99
