"""The settle rule as a pure state machine (docs/architecture.md "Settle", cases W1-W16), table-driven.

A "script" is a sequence of inputs the watch loop would feed: ``("tick", outcome)`` and
``("turn", outcome)`` run the poll; ``("turn-stale", None)`` is a turn end stamped at or before
the last steer.  :func:`play` returns the settle reason (or "" when still watching) and how many
inputs were consumed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.watch import settle
from fullsend.core.watch.settle import Action, Outcome, SettleState

T0 = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)
E, S, R, C = Outcome.EMPTY, Outcome.STEERED, Outcome.RETRY, Outcome.CLOSED


def play(script, max_steers: int = 2, steers: int = 0) -> tuple[str, int, int]:
    """Feed ``script``; returns (settle reason or "", inputs consumed, steers spent)."""
    state, clock = SettleState(), T0
    decision = settle.at_start(steers, max_steers)
    if decision.settles:
        return decision.reason, 0, steers
    for n, (kind, outcome) in enumerate(script, 1):
        clock += timedelta(seconds=30)
        if kind == "turn-stale":
            decision = settle.before_turn_end(state, state.last_steer_at or T0, clock, None, timedelta(minutes=5))
            assert decision.action is (Action.IGNORE if state.last_steer_at else Action.POLL)
            continue
        steers += outcome is S
        at = clock if outcome is S else None
        if kind == "tick":
            state, decision = settle.after_tick(state, outcome, steers, max_steers, at)
        else:
            assert settle.before_turn_end(state, clock, clock, None, timedelta(minutes=5)) == settle.POLL
            state, decision = settle.after_turn_end(state, outcome, steers, max_steers, at)
        if decision.settles:
            return decision.reason, n, steers
    return "", len(script), steers


T, U = "tick", "turn"

TABLE = [
    # id, script, max_steers, expected (reason, inputs consumed)
    ("W1-empty-turn-end", [(U, E)], 2, ("turn-end-nothing-new", 1)),
    ("W2-steer-then-empty-turn-end", [(U, S), (U, E)], 2, ("turn-end-nothing-new", 2)),
    ("W7-tick-steer-hits-cap", [(T, S)], 1, ("cap-reached", 1)),
    ("W10-four-verdictless-polls", [(U, R), (T, R), (T, R), (T, R), (T, R)], 2, ("verdictless-polls-exhausted", 4)),
    ("W8-pending-then-steer-clears-awaiting", [(U, R), (T, R), (T, S), (T, R), (T, R), (T, R), (T, R)], 3, ("", 7)),
    ("mid-turn-retries-never-count", [(T, R)] * 10, 2, ("", 10)),
    ("mid-turn-empty-continues", [(T, E)] * 10, 2, ("", 10)),
    ("permanent-error-after-pending-turn", [(U, R), (T, E)], 2, ("turn-end-nothing-new", 2)),
    ("S5-closed-at-turn-end", [(U, C)], 2, ("session-closed", 1)),
    ("S7-closed-on-tick", [(T, C)], 2, ("session-closed", 1)),
    (
        "W12-stale-turn-ends-ignored",
        [(T, S), ("turn-stale", None), ("turn-stale", None), (U, E)],
        2,
        ("turn-end-nothing-new", 4),
    ),
    ("S11-second-steer-hits-cap", [(T, S), (T, E), (U, S)], 2, ("cap-reached", 3)),
    (
        "retry-then-steer-then-new-turn-counts-afresh",
        [(U, R), (T, R), (T, R), (T, S), (U, R), (T, R), (T, R)],
        3,
        ("", 7),
    ),
]


@pytest.mark.parametrize("script, max_steers, expected", [row[1:] for row in TABLE], ids=[row[0] for row in TABLE])
def test_settle_table(script, max_steers, expected) -> None:
    reason, consumed, _ = play(script, max_steers)
    assert (reason, consumed) == expected


def test_S12_a_cap_already_spent_by_earlier_iterations_settles_before_any_poll() -> None:
    assert play([(U, S)], max_steers=2, steers=2) == ("cap-reached", 0, 2)
    assert settle.at_start(1, 2) == settle.CONTINUE


def test_W12_equal_instants_are_stale_and_later_ones_are_not() -> None:
    state = SettleState(last_steer_at=T0)
    assert settle.turn_end_is_stale(state, T0 - timedelta(seconds=1))
    assert settle.turn_end_is_stale(state, T0)
    assert not settle.turn_end_is_stale(state, T0 + timedelta(microseconds=1))
    assert not settle.turn_end_is_stale(SettleState(), T0)
    assert settle.before_turn_end(state, T0, T0, None, timedelta(minutes=5)) == settle.IGNORE_STALE


def test_a_stale_turn_end_is_ignored_even_when_low_on_time() -> None:
    state = SettleState(last_steer_at=T0)
    decision = settle.before_turn_end(state, T0, T0, T0 + timedelta(minutes=1), timedelta(minutes=5))
    assert decision.action is Action.IGNORE and decision.reason == "stale-turn-end"


@pytest.mark.parametrize(
    "left, low",
    [
        (None, False),
        (timedelta(minutes=1), True),
        (timedelta(hours=1), False),
        (timedelta(minutes=5), False),
        (timedelta(minutes=5) - timedelta(seconds=1), True),
    ],
    ids=["W14-no-deadline", "W15-one-minute", "W16-one-hour", "exactly-min-remaining", "just-under"],
)
def test_W14_W16_low_on_time(left, low) -> None:
    deadline = None if left is None else T0 + left
    assert settle.low_on_time(deadline, T0, timedelta(minutes=5)) is low
    expected = settle.settle_for("low-on-time") if low else settle.POLL
    assert settle.before_tick(T0, deadline, timedelta(minutes=5)) == expected
    assert settle.before_turn_end(SettleState(), T0, T0, deadline, timedelta(minutes=5)) == expected


def test_W4_deadline_reached_at_and_after_the_instant() -> None:
    assert not settle.deadline_reached(None, T0)
    assert not settle.deadline_reached(T0 + timedelta(milliseconds=10), T0)
    assert settle.deadline_reached(T0, T0)


def test_W13_defaults_for_non_positive_values() -> None:
    assert settle.effective_max_steers(0) == settle.effective_max_steers(-3) == 2
    assert settle.effective_max_steers(5) == 5
    assert settle.effective_poll_interval_s(0) == settle.effective_poll_interval_s(-1.0) == 5.0
    assert settle.effective_poll_interval_s(0.001) == 0.001
    assert settle.effective_min_remaining(timedelta(0)) == timedelta(minutes=5)
    assert settle.effective_min_remaining(timedelta(minutes=7)) == timedelta(minutes=7)


def test_S13_prior_steers_floor_at_zero() -> None:
    assert settle.prior_steers(-5) == 0 and settle.prior_steers(1) == 1


def test_settle_reasons_are_the_spec_ids() -> None:
    """The spec's seven, and the project id ``rate-limited`` (issue 18)."""
    assert settle.SETTLE_REASONS == (
        "turn-end-nothing-new",
        "verdictless-polls-exhausted",
        "cap-reached",
        "deadline",
        "low-on-time",
        "session-closed",
        "cancelled",
        "rate-limited",
    )
    with pytest.raises(ValueError):
        settle.settle_for("tired")


def test_a_rate_limit_past_the_window_settles_after_a_tick_or_a_turn_end() -> None:
    for after in (settle.after_tick, settle.after_turn_end):
        _state, decision = after(SettleState(), Outcome.LIMITED, 0, 2)
        assert decision == settle.Decision(settle.Action.SETTLE, "rate-limited")


@given(
    st.lists(st.tuples(st.sampled_from([T, U]), st.sampled_from([E, S, R, C])), max_size=40),
    st.integers(min_value=1, max_value=4),
)
def test_properties_of_any_script(script, max_steers) -> None:
    reason, consumed, steers = play(script, max_steers)
    assert steers <= max_steers  # never past the cap: the cap settles on the steer that reaches it
    if reason == "":
        assert consumed == len(script)
        tail = script[consumed - 1] if script else None
        assert tail is None or tail[1] is not C  # Closed always settles
    else:
        assert reason in settle.SETTLE_REASONS
        _last_kind, last_outcome = script[consumed - 1]
        if reason == "verdictless-polls-exhausted":
            # exactly four consecutive verdict-less polls: a turn end's Retry and three ticks' Retries
            assert [o for _, o in script[consumed - 4 : consumed]] == [R] * 4
            assert script[consumed - 4][0] == U
        if reason == "turn-end-nothing-new":
            assert last_outcome is E


@given(st.lists(st.sampled_from([E, R]), max_size=60))
def test_without_a_turn_end_only_the_cap_or_a_closed_session_settles(outcomes) -> None:
    reason, consumed, _ = play([(T, o) for o in outcomes])
    assert reason == "" and consumed == len(outcomes)
