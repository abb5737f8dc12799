"""The watch loop and settle (docs/architecture.md "Settle"), through the simulator and the real adapter.

Timing is never asserted: each test checks the order of events (steer before settle, which
polls happened) and outcomes (settle reason, settle count, deliveries).
"""

from __future__ import annotations

from datetime import timedelta

from fullsend.app.watch.watcher import WatchConfig
from fullsend.core.watch import settle
from fullsend.errors import SteerAfterSettle
from tests.app.watch.watch_rig import LISTING, Rig, at, finish, run_watch, wait_for


def _moved(rig: Rig, head: str = "bbb222") -> None:
    rig.sim.move_head(7, head)


def test_W1_a_turn_end_over_an_empty_listing_settles_once(rig: Rig) -> None:
    w = rig.watcher(poll_interval_s=3600)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "turn-end-nothing-new"
    assert rig.steerer.settles == ["sandbox-1"] and rig.steerer.messages == []
    assert rig.lines("[turn-end-nothing-new]")


def test_W2_turn_end_steers_then_a_later_turn_end_settles(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    w = rig.watcher(poll_interval_s=3600)
    thread = run_watch(w, turn_ends=1)
    wait_for(lambda: w.result().delivered, "the first turn end's steer")
    w.turn_ended(rig.clock.now())  # stamped after the steer
    finish(thread)
    assert [m.follow_up_run_id for m in rig.steerer.messages] == [101]
    assert w.result().settle_reason == "turn-end-nothing-new"
    assert rig.steerer.calls == [("steer", 101), ("settle", 0)]


def test_W3_cancellation_returns_and_settles_once(rig: Rig) -> None:
    w = rig.watcher(poll_interval_s=3600)
    thread = run_watch(w)
    w.stop()
    finish(thread)
    assert w.result().settle_reason == "cancelled" and rig.steerer.settles == ["sandbox-1"]


def test_W4_the_deadline_ends_the_watch_and_settles_once(rig: Rig) -> None:
    w = rig.watcher(poll_interval_s=3600, deadline=rig.clock.now() + timedelta(milliseconds=10))
    finish(run_watch(w))
    assert w.result().settle_reason == "deadline" and rig.steerer.settles == ["sandbox-1"]
    assert rig.listings() == 0


def test_W5_a_closed_turn_end_channel_settles_once(rig: Rig) -> None:
    w = rig.watcher(poll_interval_s=3600)
    thread = run_watch(w)
    w.close_turn_ends()
    finish(thread)
    assert w.result().settle_reason == "session-closed" and rig.steerer.settles == ["sandbox-1"]


def test_W5_a_close_ends_the_watch_without_polling_for_buffered_turn_ends(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    w = rig.watcher(poll_interval_s=3600)
    w.turn_ended(rig.clock.now())
    w.close_turn_ends()
    finish(run_watch(w))
    assert w.result().settle_reason == "session-closed"
    assert rig.listings() == 0 and rig.steerer.calls == [("settle", 0)]


def test_W6_settling_again_after_the_watch_is_a_no_op(rig: Rig) -> None:
    w = rig.watcher(poll_interval_s=3600)
    finish(run_watch(w, turn_ends=1))
    w.settle()
    w.settle()
    assert rig.steerer.settles == ["sandbox-1"]


def test_W7_a_tick_steers_mid_turn_then_the_cap_settles(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    w = rig.watcher(poll_interval_s=0.001, max_steers=1)
    finish(run_watch(w))
    assert [m.follow_up_run_id for m in rig.steerer.messages] == [101]
    assert w.result().settle_reason == "cap-reached"
    assert rig.steerer.calls == [("steer", 101), ("settle", 0)]


def test_W8_a_pending_route_holds_the_session_until_it_succeeds(rig: Rig) -> None:
    run = rig.accept(101, route="in_progress")
    _moved(rig)
    route_job = rig.sim.jobs_of(run["id"])[0]["id"]
    rig.sim.on_request(
        rig.sim.match("GET", r"/actions/runs/101/jobs$"),
        lambda s: s.update_job(route_job, status="completed", conclusion="success"),
    )
    w = rig.watcher(poll_interval_s=0.3, max_steers=1)
    finish(run_watch(w, turn_ends=1))
    assert rig.job_reads(101) == 2  # pending at the turn end, success at the next tick
    assert rig.steerer.calls == [("steer", 101), ("settle", 0)]
    assert w.result().settle_reason == "cap-reached"
    assert rig.lines("[route-pending]")


def test_W9_a_failing_listing_does_not_settle_and_the_recovery_delivers(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    rig.sim.fail("GET", LISTING, 500, times=10)  # two whole polls (5 attempts each), then it recovers
    w = rig.watcher(poll_interval_s=0.3, max_steers=1)
    finish(run_watch(w, turn_ends=1))
    assert rig.sim.request_count("GET", LISTING, status=500) == 10
    assert rig.steerer.calls == [("steer", 101), ("settle", 0)]
    assert w.result().settle_reason == "cap-reached"
    assert len(rig.lines("Listing follow-up runs failed")) == 1  # one warning per failure kind


def test_W10_a_listing_failing_forever_settles_after_its_verdictless_polls(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    rig.sim.fail("GET", LISTING, 500, times=None)
    w = rig.watcher(poll_interval_s=0.01)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "verdictless-polls-exhausted"
    # The turn-end poll and 23 ticks (24 polls at 0.01 s: settle.retry_polls), each retried 5 times by the client.
    assert rig.listings() == settle.retry_polls(0.01) * 5 == 24 * 5
    assert w.result().steers == 0 and list(w.result().delivered) == [] and rig.steerer.settles == ["sandbox-1"]


def test_W11_a_route_pending_forever_settles_after_its_verdictless_polls(rig: Rig) -> None:
    rig.accept(101, route="in_progress")
    _moved(rig)
    w = rig.watcher(poll_interval_s=0.01)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "verdictless-polls-exhausted"
    assert rig.job_reads(101) == settle.retry_polls(0.01) == 24
    assert w.result().steers == 0 and list(w.result().left) == [(101, "route-pending")]


def test_W12_turn_ends_at_or_before_the_steer_are_ignored(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    w = rig.watcher(poll_interval_s=0.02)
    thread = run_watch(w)
    wait_for(lambda: w.result().last_steer_at is not None, "the ticker's steer")
    steered_at = w.result().last_steer_at
    assert steered_at is not None
    w.turn_ended(steered_at - timedelta(seconds=1))
    w.turn_ended(steered_at)
    wait_for(lambda: len(rig.lines("[stale-turn-end]")) == 2, "both stale turn ends handled")
    assert rig.steerer.settles == []
    w.turn_ended(rig.clock.now())
    finish(thread)
    assert w.result().settle_reason == "turn-end-nothing-new"
    assert rig.steerer.calls == [("steer", 101), ("settle", 0)]


def test_W13_defaults() -> None:
    cfg = WatchConfig(
        run_id=1, run_name="", item_number=7, self_logins=frozenset({"x"}), started_at=at("2026-09-03T10:00:00Z")
    )
    assert settle.effective_poll_interval_s(cfg.poll_interval_s) == 5.0
    assert settle.effective_max_steers(cfg.max_steers) == 2
    assert settle.effective_min_remaining(cfg.min_remaining) == timedelta(minutes=5)
    assert cfg.deadline is None


def test_W13_a_watcher_applies_the_defaults(rig: Rig) -> None:
    w = rig.watcher(start=False, max_steers=0, poll_interval_s=0, min_remaining=timedelta(0))
    assert (w.config.max_steers, w.config.poll_interval_s, w.config.min_remaining) == (2, 5.0, timedelta(minutes=5))


def test_W14_no_deadline_is_never_low_on_time() -> None:
    assert not settle.low_on_time(None, at("2026-09-03T10:00:00Z"), timedelta(minutes=5))


def test_W15_low_on_time_settles_instead_of_steering(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    w = rig.watcher(poll_interval_s=3600, deadline=rig.clock.now() + timedelta(minutes=1))
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "low-on-time"
    assert rig.steerer.messages == [] and rig.listings() == 0
    assert rig.lines("Less than 5 min of run budget left")


def test_W16_an_hour_left_is_not_low_on_time() -> None:
    now = at("2026-09-03T10:00:00Z")
    assert not settle.low_on_time(now + timedelta(hours=1), now, timedelta(minutes=5))


def test_a_steer_refused_after_settle_ends_the_watch_and_leaves_the_batch(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    rig.steerer.fail_next.append(SteerAfterSettle("settling"))
    w = rig.watcher(poll_interval_s=3600)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "session-closed"
    assert list(w.result().left) == [(101, "session-closed")] and list(w.result().delivered) == []


def test_a_settle_error_is_warned_never_raised(rig: Rig) -> None:
    rig.steerer.settle_error = RuntimeError("feeder already gone")
    w = rig.watcher(poll_interval_s=3600)
    finish(run_watch(w, turn_ends=1))
    assert rig.lines("Settling the agent session failed", level="warning")
    assert w.result().settle_reason == "turn-end-nothing-new"


def test_W3_a_cancellation_during_a_poll_delivers_nothing(rig: Rig) -> None:
    rig.accept(101)
    _moved(rig)
    w = rig.watcher(poll_interval_s=3600)
    rig.sim.on_request(rig.sim.match("GET", LISTING), lambda s: w.stop())
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "cancelled"
    assert rig.steerer.calls == [("settle", 0)] and list(w.result().delivered) == []
    assert list(w.result().left) == [(101, "cancelled")]


def test_the_steer_row_names_who_made_the_updates_each_once(rig: Rig) -> None:
    """A push's run names the pusher, a comment's run the commenter: each run's ``actor``
    (docs/architecture.md "Status comments")."""
    rig.accept(101, actor="pusher")
    rig.accept(102, actor="pusher")
    rig.accept(103, actor="other-dev")
    _moved(rig)
    w = rig.watcher(poll_interval_s=0.001, max_steers=1)
    finish(run_watch(w))
    (row,) = rig.timeline.of_kind("steer")
    assert (row.run_ids, row.authors) == ((101, 102, 103), ("pusher", "other-dev"))
