"""Ceilings of the watch (docs/architecture.md "Settle", issue 7): deadline and MinRemaining."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.watch import settle

START = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "timeout_minutes, expires_in, expected",
    [
        (30, None, timedelta(minutes=30)),  # the action's default timeout_minutes
        (50, None, timedelta(minutes=50)),
        (90, None, timedelta(minutes=50)),  # token life 60 min − margin 10 min caps it
        (30, timedelta(minutes=60), timedelta(minutes=30)),  # expires_at − 10 min is later: no effect
        (90, timedelta(minutes=45), timedelta(minutes=35)),  # a token minted to expire early: expires_at − 10 min
        (30, timedelta(minutes=25), timedelta(minutes=15)),
    ],
    ids=["default-30", "exactly-50", "capped-at-50", "token-later", "token-earlier", "token-earlier-than-timeout"],
)
def test_watch_deadline(timeout_minutes, expires_in, expected) -> None:
    expires_at = None if expires_in is None else START + expires_in
    assert settle.watch_deadline(START, timeout_minutes, expires_at) == START + expected


def test_min_remaining_adds_the_codex_interrupt_cost_only_on_codex() -> None:
    assert settle.min_remaining_for("claude") == timedelta(minutes=5)
    assert settle.min_remaining_for("pi") == timedelta(minutes=5)
    assert settle.min_remaining_for("codex") == timedelta(minutes=5, seconds=12)
    assert settle.min_remaining_for("codex", interrupt_cost=timedelta(seconds=50)) == timedelta(minutes=5, seconds=50)


def test_codex_is_low_on_time_earlier_than_claude() -> None:
    deadline = START + timedelta(minutes=5, seconds=6)
    assert not settle.low_on_time(deadline, START, settle.min_remaining_for("claude"))
    assert settle.low_on_time(deadline, START, settle.min_remaining_for("codex"))


def test_constants() -> None:
    assert settle.MAX_RETRY_POLLS == 4
    assert (settle.DEFAULT_MAX_STEERS, settle.DEFAULT_POLL_INTERVAL_S) == (2, 5.0)
    assert settle.DEFAULT_MIN_REMAINING == timedelta(minutes=5)
    assert settle.CODEX_INTERRUPT_COST == timedelta(seconds=12)


def test_a_turn_end_waits_for_a_verdict_as_long_at_any_poll_interval() -> None:
    """4 verdict-less polls, or as many as cover 2 minutes at a shorter interval (the former 30 s
    default's wait), at most 24: never fewer than 4."""
    assert settle.AWAITING_BUDGET_S == 120.0
    assert [settle.retry_polls(s) for s in (30.0, 60.0, 600.0, 0.0)] == [4, 4, 4, 4]
    assert [settle.retry_polls(s) for s in (5.0, 10.0, 7.0, 1.0, 0.01)] == [24, 12, 18, 24, 24]
    state = settle.SettleState(awaiting=True, retries=1)
    for _ in range(22):
        state, decision = settle.after_tick(state, settle.Outcome.RETRY, 0, 2, max_retries=24)
        assert not decision.settles
    state, decision = settle.after_tick(state, settle.Outcome.RETRY, 0, 2, max_retries=24)
    assert decision.reason == settle.VERDICTLESS_POLLS_EXHAUSTED and state.retries == 24
