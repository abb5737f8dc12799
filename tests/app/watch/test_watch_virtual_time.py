"""The real watch loop on a virtual clock (docs/architecture.md "Threads and time").

Every wait of ``Watcher.watch`` goes through ``Clock.wait``, so ``VirtualClock`` drives the real
loop: a half-hour watch makes its polls at exact multiples of the poll interval without waiting
half an hour, and a turn end ends the wait at the virtual instant it arrives.  Counts and virtual
instants are asserted, never wall time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from fullsend.adapters.clock import SystemClock
from fullsend.core.watch.gate import BACKSTOP_S
from fullsend.simulator.server import GitHubSimulator
from tests.app.watch.watch_rig import CLOCK_ORIGIN, Rig, at, finish, make_rig
from tests.doubles.virtual_clock import VirtualClock

HALF_HOUR_S = 1800.0


@pytest.fixture
def vrig() -> Iterator[Rig]:
    clock = VirtualClock(at(CLOCK_ORIGIN))
    with GitHubSimulator(clock=clock.now) as sim:
        yield make_rig(sim, clock)  # type: ignore[arg-type]


def _poll_instants_s(rig: Rig) -> list[float]:
    """Virtual seconds since the clock's origin of every poll the timeline recorded."""
    return [(e.at - at(CLOCK_ORIGIN)).total_seconds() for e in rig.timeline.of_kind("poll")]


@pytest.mark.parametrize(("poll_s", "ticks"), [(30.0, 59), (60.0, 29)], ids=["poll-30s", "poll-60s"])
def test_a_half_hour_watch_polls_once_per_interval_on_virtual_time(vrig: Rig, poll_s: float, ticks: int) -> None:
    """Every tick reads the quiet item (two 304s: issue and pull record); the listing gate stays
    shut, so the shim's runs are listed at the first tick and then by the backstop only
    (docs/architecture.md "Listing gate")."""
    clock = vrig.clock
    w = vrig.watcher(
        poll_interval_s=poll_s,
        deadline=clock.now() + timedelta(seconds=HALF_HOUR_S),
        min_remaining=timedelta(seconds=1),
    )
    vrig.sim.reset_requests()
    w.watch()  # on this thread: each wait of the real loop moves the virtual clock at once
    assert w.result().settle_reason == "deadline" and clock.monotonic() == HALF_HOUR_S
    listed = [poll_s + BACKSTOP_S * k for k in range(3)]  # the tick at the deadline settles
    assert _poll_instants_s(vrig) == listed and listed[-1] < HALF_HOUR_S < listed[-1] + BACKSTOP_S
    assert w.state.polls == 3 and vrig.listings() == 3
    assert (
        vrig.sim.request_count() == 3 + 2 * ticks and vrig.sim.request_count("GET", r"/(issues|pulls)/7$") == 2 * ticks
    )
    assert vrig.sim.counted_request_count() == 1  # the first listing; every item read and later listing a 304
    assert vrig.steerer.settles == ["sandbox-1"] and vrig.steerer.messages == []


def test_low_on_time_settles_at_the_first_tick_inside_min_remaining(vrig: Rig) -> None:
    clock = vrig.clock
    w = vrig.watcher(
        poll_interval_s=30.0, deadline=clock.now() + timedelta(seconds=HALF_HOUR_S), min_remaining=timedelta(minutes=5)
    )
    w.watch()
    assert w.result().settle_reason == "low-on-time" and clock.monotonic() == HALF_HOUR_S - 270
    # The listing gate stays shut on a quiet item: the first tick and the backstop list, the last before 25 min.
    assert _poll_instants_s(vrig) == [30.0 + BACKSTOP_S * k for k in range(3)]


def test_a_turn_end_ends_the_wait_at_its_virtual_instant(vrig: Rig) -> None:
    clock = vrig.clock
    w = vrig.watcher(poll_interval_s=30.0)
    thread = clock.spawn(w.watch, "watcher")  # a participant: it runs only while the driver waits in the clock
    assert clock.next_due_s() == 30.0
    clock.advance_to(45.0)  # the tick at 30 s polls on the way
    assert _poll_instants_s(vrig) == [30.0] and clock.next_due_s() == 60.0
    w.turn_ended(clock.now())
    clock.run_due()  # handled at 45 s, not at the 60 s tick: nothing new, so it settles
    finish(thread)
    assert w.result().settle_reason == "turn-end-nothing-new" and _poll_instants_s(vrig) == [30.0, 45.0]
    assert clock.monotonic() == 45.0 and clock.next_due_s() is None


def test_a_steer_at_a_tick_then_a_stale_turn_end_is_ignored_on_virtual_time(vrig: Rig) -> None:
    clock = vrig.clock
    vrig.accept(101)
    vrig.sim.move_head(7, "bbb222")
    w = vrig.watcher(poll_interval_s=30.0)
    stale = clock.now()
    thread = clock.spawn(w.watch, "watcher")
    clock.advance_to(31.0)
    assert [m.follow_up_run_id for m in vrig.steerer.messages] == [101] and w.result().last_steer_at == at(
        CLOCK_ORIGIN
    ) + timedelta(seconds=30)
    w.turn_ended(stale)  # ended before the steer was delivered: superseded
    clock.run_due()
    assert vrig.lines("[stale-turn-end]") and thread.is_alive() and clock.next_due_s() == 60.0
    w.stop()
    clock.run_due()
    finish(thread)
    assert w.result().settle_reason == "cancelled" and _poll_instants_s(vrig) == [30.0]
    assert vrig.steerer.calls == [("steer", 101), ("settle", 0)]


def test_the_virtual_clock_ends_participant_waits_in_due_order() -> None:
    clock = VirtualClock(at(CLOCK_ORIGIN))
    woke: list[tuple[str, float]] = []

    def sleeper(name: str, every_s: float) -> None:
        for _ in range(3):
            clock.sleep(every_s)
            woke.append((name, clock.monotonic()))

    threads = [clock.spawn(lambda: sleeper("a", 20.0), "a"), clock.spawn(lambda: sleeper("b", 30.0), "b")]
    clock.advance_to(100.0)
    assert woke[:3] == [("a", 20.0), ("b", 30.0), ("a", 40.0)]
    assert sorted(woke[3:5]) == [("a", 60.0), ("b", 60.0)] and woke[5:] == [("b", 90.0)]  # a and b wake together at 60
    assert clock.monotonic() == 100.0
    for thread in threads:
        finish(thread)


def test_a_driver_wait_moves_virtual_time_at_once_and_reports_a_set_event() -> None:
    clock = VirtualClock(at(CLOCK_ORIGIN))
    wake = threading.Event()
    assert clock.wait(wake, 90.0) is False and clock.monotonic() == 90.0
    assert clock.sleep(10.0) is True and clock.now() == at(CLOCK_ORIGIN) + timedelta(seconds=100)
    wake.set()
    assert clock.wait(wake, 90.0) is True and clock.monotonic() == 100.0


def test_the_system_clock_wait_ends_when_its_event_is_set() -> None:
    clock, wake = SystemClock(), threading.Event()
    setter = threading.Thread(target=wake.set)
    setter.start()
    assert clock.wait(wake, 600.0) is True  # a wait that was not woken would report False
    assert clock.join(setter, 600.0) is True
    assert clock.wait(threading.Event(), 0.0) is False
