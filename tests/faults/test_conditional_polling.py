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
from fullsend.core.watch.gate import BACKSTOP_S
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


@pytest.mark.parametrize(("poll_s", "ticks"), [(30.0, 120), (10.0, 360)], ids=["poll-30s", "poll-10s"])
def test_an_idle_hour_costs_no_counted_request_after_the_first_poll(world: Setup, poll_s: float, ticks: int) -> None:
    """Each tick reads the quiet pull request (issue and pull record, both 304 after Start's
    reads); the listing gate stays shut, so the listing is made at the first tick and then by the
    backstop every 600 s (docs/architecture.md "Listing gate")."""
    sim, clock = world[0], world[1]
    session = _session(world, poll_s)
    sim.reset_requests()  # Start's four reads (own run, its jobs, PR, issue) are not polls
    session.run_until_done(HOUR_S)
    listings = [r for r in sim.requests if r.path.endswith("/fullsend.yml/runs")]
    items = [r for r in sim.requests if r.path.endswith(("/issues/7", "/pulls/7"))]
    assert session.polls == 6 == HOUR_S // BACKSTOP_S and clock.monotonic() == HOUR_S
    assert len(listings) + len(items) == len(sim.requests) and len(items) == 2 * ticks
    assert [r.status for r in listings] == [200] + [304] * 5 and {r.status for r in items} == {304}
    assert sim.counted_request_count() == 1  # the first poll
    first_tag = listings[0].headers.get("if-none-match")
    assert first_tag is None and {r.headers["if-none-match"] for r in listings[1:]} == {
        listings[1].headers["if-none-match"]
    }


def test_after_a_burst_is_absorbed_polling_is_free_again(world: Setup) -> None:
    sim = world[0]
    session = _session(world, 30.0)
    session.run_until_done(600.0)
    add_comment_follow_up(sim, "/fs-review please re-check the migration")
    session.run_until_done(630.0)  # the tick at 630 s reads the changed item, lists and steers
    assert len(session.agent.pending) == 1 and session.watcher.result().steers == 1
    sim.reset_requests()
    session.run_until_done(HOUR_S)
    # Listed at 30 s (the first) and 630 s (the change, also the backstop's turn; it steered); then
    # the backstop lists every 600 s: 1230 … 3030 s.
    assert session.polls == 2 + 4
    assert sim.counted_request_count() == 0 and sim.request_count("GET", LISTING) == 4
