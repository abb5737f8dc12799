"""Every accepted follow-up run is in the posted receipt or left to its queued run, with why
(docs/rules.md#not-acknowledged, docs/rules.md#no-receipt)."""

from __future__ import annotations

from fullsend.core.receipt.left_over import left_over


def test_a_delivered_run_the_agent_never_acknowledged_is_left_as_not_acknowledged() -> None:
    assert left_over([], delivered=[12, 11], acknowledged=[11], receipted=[11]) == [(12, "not-acknowledged")]


def test_an_acknowledged_run_without_a_posted_receipt_is_left_as_no_receipt() -> None:
    assert left_over([], delivered=[11, 12], acknowledged=[11], receipted=[]) == [
        (11, "no-receipt"),
        (12, "not-acknowledged"),
    ]


def test_the_watchers_own_list_comes_first_and_the_delivered_runs_follow_in_id_order() -> None:
    watcher = [(30, "route-pending"), (12, "too-large")]
    assert left_over(watcher, delivered=[14, 13], acknowledged=[], receipted=[]) == [
        (30, "route-pending"),
        (12, "too-large"),
        (13, "not-acknowledged"),
        (14, "not-acknowledged"),
    ]


def test_a_receipted_run_is_never_left_over() -> None:
    assert left_over([(11, "unbound")], delivered=[11], acknowledged=[11], receipted=[11]) == []


def test_a_run_two_iterations_left_is_listed_once_with_the_later_reason() -> None:
    watcher = [(40, "session-closed"), (41, "route-pending"), (40, "empty-delta")]
    assert left_over(watcher, delivered=[], acknowledged=[], receipted=[]) == [
        (40, "empty-delta"),
        (41, "route-pending"),
    ]


def test_a_later_delivery_replaces_the_reason_an_earlier_iteration_left_a_run_with() -> None:
    assert left_over([(40, "session-closed")], delivered=[40], acknowledged=[], receipted=[]) == [
        (40, "not-acknowledged")
    ]


def test_an_acknowledged_run_of_a_receipt_whose_post_got_no_answer_is_receipt_unknown() -> None:
    assert left_over([], delivered=[11, 12], acknowledged=[11], receipted=[], maybe_receipted=[11]) == [
        (11, "receipt-unknown"),
        (12, "not-acknowledged"),
    ]
