"""Issue 18: what a rate limit means for the watcher (docs/rules.md#rate-limited), through the simulator.

A limit of up to a minute is waited out inside the poll's request; a longer one pauses the polls
until it ends (nothing is sent into it meanwhile); one that ends after the steer window settles
the run with ``rate-limited``, logged once with the reset time.  Time is virtual: nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from fullsend.core.scalars import format_time
from fullsend.core.watch.settle import Outcome
from fullsend.simulator.server import GitHubSimulator
from tests.app.watch.watch_rig import CLOCK_ORIGIN, LISTING, Rig, at, finish, make_rig, run_watch
from tests.doubles.recording_clock import RecordingVirtualClock


@pytest.fixture
def vrig() -> Iterator[Rig]:
    clock = RecordingVirtualClock(at(CLOCK_ORIGIN))
    with GitHubSimulator(clock=clock.now) as sim:
        yield make_rig(sim, clock)  # type: ignore[arg-type]


def _push(rig: Rig) -> None:
    """A push to PR 7 and its authorized pull_request_target run 55: a visible change to steer with."""
    rig.sim.move_head(7, "b" * 40)
    rig.accept(55)


def test_a_short_limit_is_waited_out_inside_the_poll(vrig: Rig) -> None:
    _push(vrig)
    vrig.sim.secondary_limit("GET", LISTING, retry_after=40)
    w = vrig.watcher(deadline=vrig.clock.now() + timedelta(minutes=30))
    assert w.poll_and_steer() is Outcome.STEERED
    assert vrig.clock.slept_s == [40.0] and vrig.listings() == 2


def test_a_longer_limit_pauses_the_polls_and_nothing_is_sent_into_it(vrig: Rig) -> None:
    _push(vrig)
    reset = vrig.clock.now() + timedelta(minutes=3)
    vrig.sim.primary_limit("GET", LISTING, reset_at=reset)
    w = vrig.watcher(deadline=vrig.clock.now() + timedelta(minutes=30))
    assert w.poll_and_steer() is Outcome.RETRY
    until = reset + timedelta(seconds=1)
    assert w.state.paused_until == until
    assert vrig.lines(
        f"GitHub's rate limit holds until {format_time(until)}; pausing the polls until then [rate-limited]"
    )
    assert w._pause_ends() == pytest.approx(vrig.clock.monotonic() + (until - vrig.clock.now()).total_seconds())
    assert w.poll_and_steer() is Outcome.RETRY  # a turn end meanwhile: refused before it is sent
    assert vrig.listings() == 1 and vrig.clock.slept_s == []
    vrig.clock.advance_to(vrig.clock.monotonic() + (until - vrig.clock.now()).total_seconds())
    assert w.poll_and_steer() is Outcome.STEERED  # the pause is over: the follow-up is steered
    assert vrig.listings() == 2


def test_a_limit_past_the_steer_window_settles_once_with_the_reset_time(vrig: Rig) -> None:
    _push(vrig)
    reset = vrig.clock.now() + timedelta(minutes=24)
    vrig.sim.primary_limit("GET", LISTING, reset_at=reset, times=None)
    w = vrig.watcher(deadline=vrig.clock.now() + timedelta(minutes=20))
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "rate-limited"
    until = format_time(reset + timedelta(seconds=1))
    settled = vrig.lines("[rate-limited]")
    assert settled == [
        f"GitHub's rate limit holds until {until}, past this run's steer window or longer than "
        "the agent may wait at its turn end; settling and leaving later updates to the queued run "
        "[rate-limited]"
    ]
    assert vrig.listings() == 1 and vrig.steerer.messages == [] and vrig.steerer.settles == ["sandbox-1"]
    assert (55, "rate-limited") not in w.result().left  # never judged: the queued run does it, with no receipt


def test_a_limit_on_the_delta_reads_past_the_window_settles_without_a_steer(vrig: Rig) -> None:
    _push(vrig)
    vrig.sim.secondary_limit("GET", r"/issues/7/comments$", retry_after=3600, times=None)
    w = vrig.watcher(deadline=vrig.clock.now() + timedelta(minutes=20))
    assert w.poll_and_steer() is Outcome.LIMITED
    assert vrig.steerer.messages == [] and 55 not in w.state.carry.seen


def test_a_run_accepted_in_the_poll_that_hits_a_limit_past_the_window_is_left_with_the_reason(vrig: Rig) -> None:
    """Run 55 passes provenance; reading run 56's jobs in the same poll meets a limit past the
    window: 55 is not delivered, and the summary still names it as left to its queued run."""
    _push(vrig)
    vrig.accept(56, created_at="2026-09-03T10:06:00Z")  # judged after 55
    reset = vrig.clock.now() + timedelta(minutes=24)
    vrig.sim.primary_limit("GET", r"/actions/runs/56/jobs$", reset_at=reset, times=None)
    w = vrig.watcher(deadline=vrig.clock.now() + timedelta(minutes=20))
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "rate-limited" and vrig.steerer.messages == []
    assert (55, "rate-limited") in w.result().left


@pytest.mark.parametrize("limit", ["headerless-secondary", "primary-3-min"])
def test_a_limit_at_a_turn_end_does_not_hold_the_idle_agent(vrig: Rig, limit: str) -> None:
    """The agent ended its turn and waits for a verdict; a limit that would keep it idle for more
    than a minute settles the run at once (``rate-limited``), long before the steer window ends:
    the follow-up is left to the queued run, which does the work."""
    _push(vrig)
    if limit == "primary-3-min":
        vrig.sim.primary_limit("GET", LISTING, reset_at=vrig.clock.now() + timedelta(minutes=3), times=None)
    else:  # 60 s, then 120 s …: the second strike is past the minute
        vrig.sim.secondary_limit("GET", LISTING, retry_after=None, times=None)
    w = vrig.watcher(deadline=vrig.clock.now() + timedelta(minutes=30))
    started = vrig.clock.now()
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "rate-limited"
    assert vrig.clock.now() - started <= timedelta(seconds=61)  # at most the one in-request wait
    assert vrig.steerer.messages == [] and vrig.steerer.settles == ["sandbox-1"]
