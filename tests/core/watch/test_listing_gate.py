"""The listing gate's decisions and the moving ``created>=`` bound, pure (docs/architecture.md "Listing gate")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fullsend.core.watch import gate
from fullsend.core.watch.gate import (
    BACKSTOP_S,
    BOUND_MARGIN,
    BOUND_MOVE_RUNS,
    BOUND_STEP,
    CLOSED,
    GATE_WINDOW_S,
    OPEN_BACKSTOP,
    OPEN_CHANGED,
    OPEN_FORCED,
    OPEN_PENDING,
    OPEN_WINDOW,
    Gate,
)

T0 = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)


def _listed_at(now_s: float, version: str = "v1") -> Gate:
    """A gate whose baseline version is ``version`` and whose last listing was at ``now_s``."""
    first, why = gate.decide(Gate(), now_s, version, pending=False, forced=False)
    assert why == OPEN_BACKSTOP  # the first listing is always made
    return gate.listed(first, now_s)


def test_the_first_read_is_a_baseline_and_the_first_listing_is_the_backstops() -> None:
    g, why = gate.decide(Gate(), 5.0, "v1", pending=False, forced=False)
    assert why == OPEN_BACKSTOP and g.version == "v1" and g.open_until_s == float("-inf")


def test_a_quiet_item_keeps_the_gate_shut_until_the_backstop() -> None:
    g = _listed_at(5.0)
    assert gate.decide(g, 5.0 + BACKSTOP_S - 1, "v1", False, False)[1] == CLOSED
    assert gate.decide(g, 5.0 + BACKSTOP_S, "v1", False, False)[1] == OPEN_BACKSTOP


def test_a_change_opens_the_gate_for_its_window() -> None:
    g, why = gate.decide(_listed_at(5.0), 10.0, "v2", False, False)
    assert why == OPEN_CHANGED and g.version == "v2" and g.open_until_s == 10.0 + GATE_WINDOW_S
    g = gate.listed(g, 10.0)
    assert gate.decide(g, 10.0 + GATE_WINDOW_S - 1, "v2", False, False)[1] == OPEN_WINDOW
    assert gate.decide(g, 10.0 + GATE_WINDOW_S, "v2", False, False)[1] == CLOSED


def test_an_unreadable_item_opens_the_gate_and_keeps_the_last_version() -> None:
    g, why = gate.decide(_listed_at(5.0), 10.0, None, False, False)
    assert why == OPEN_CHANGED and g.version == "v1" and g.open_until_s == 10.0 + GATE_WINDOW_S


def test_a_pending_candidate_and_a_forced_listing_open_the_gate() -> None:
    g = _listed_at(5.0)
    assert gate.decide(g, 200.0, "v1", pending=True, forced=False)[1] == OPEN_PENDING
    assert gate.decide(g, 200.0, "v1", pending=False, forced=True)[1] == OPEN_FORCED


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_the_bound_stays_while_the_listing_is_short() -> None:
    listed = [_at(1)] * (BOUND_MOVE_RUNS - 1)
    assert gate.moved_bound(T0, T0, _at(60), [], listed) == T0  # a move would cost a counted read


def test_the_bound_moves_in_steps_below_the_listing_instant_minus_the_margin() -> None:
    listed = [_at(1)] * BOUND_MOVE_RUNS + [_at(55)]
    bound = gate.moved_bound(T0, T0, _at(60), [], listed)
    assert bound == T0 + BOUND_STEP * ((timedelta(minutes=60) - BOUND_MARGIN) // BOUND_STEP) == _at(50)


def test_an_undecided_run_is_never_left_below_the_bound() -> None:
    listed = [_at(1)] * BOUND_MOVE_RUNS + [_at(35)]
    bound = gate.moved_bound(T0, T0, _at(60), [_at(35)], listed)
    assert bound <= _at(35) - BOUND_MARGIN and bound == _at(20)


def test_an_undecided_run_of_unknown_creation_keeps_the_bound() -> None:
    listed = [_at(1)] * BOUND_MOVE_RUNS
    assert gate.moved_bound(_at(10), T0, _at(60), [None], listed) == _at(10)


def test_the_bound_never_moves_down_nor_below_my_runs_start() -> None:
    listed = [_at(-5)] * BOUND_MOVE_RUNS
    assert gate.moved_bound(_at(20), T0, _at(25), [_at(12)], listed) == _at(20)
    assert gate.moved_bound(T0, T0, _at(5), [], listed) == T0


def _changed_at(change: datetime) -> Gate:
    """A gate whose item changed at ``change`` (read at 10.0 s), listed then."""
    g, why = gate.decide(_listed_at(5.0), 10.0, "v2", False, False, change)
    assert why == OPEN_CHANGED and g.changed_at == change
    return gate.listed(g, 10.0)


def test_the_window_closes_once_the_changes_run_is_listed_and_decided() -> None:
    g = gate.settled(_changed_at(_at(1)), 15.0, [_at(0), _at(1)], pending=False)
    assert g.open_until_s == 15.0 and gate.decide(g, 20.0, "v2", False, False)[1] == CLOSED


def test_every_doubt_keeps_the_window_open() -> None:
    g = _changed_at(_at(1))
    open_until = 10.0 + GATE_WINDOW_S
    assert gate.settled(g, 15.0, [_at(1)], pending=True).open_until_s == open_until  # still being decided
    assert gate.settled(g, 15.0, [_at(0.9), None], pending=False).open_until_s == open_until  # older, unknown
    assert gate.settled(g, 15.0, [], pending=False).open_until_s == open_until  # no run of my item yet
    unknown, _ = gate.decide(_listed_at(5.0), 10.0, "v2", False, False, None)
    assert gate.settled(unknown, 15.0, [_at(2)], pending=False).open_until_s == open_until
    unreadable, _ = gate.decide(g, 12.0, None, False, False, _at(1))  # an unreadable item: no instant
    assert unreadable.changed_at is None
