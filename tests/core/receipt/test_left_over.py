"""Every accepted follow-up run is in the posted receipt or left to its queued run, with why
(docs/rules.md#not-acknowledged, docs/rules.md#no-receipt)."""

from __future__ import annotations

from fullsend.core.receipt.left_over import left_over


def test_a_delivered_run_the_agent_never_acknowledged_is_left_as_not_acknowledged() -> None:
    assert left_over([], delivered=[12, 11], acknowledged=[11], receipted=[11]) == [(12, "not-acknowledged")]


def test_an_acknowledged_run_without_a_posted_receipt_is_left_as_no_receipt() -> None:
    assert left_over([], delivered=[11, 12], acknowledged=[11], receipted=[]) == [
        (11, "no-receipt"), (12, "not-acknowledged")]


def test_the_watchers_own_list_comes_first_and_no_run_is_listed_twice() -> None:
    watcher = [(30, "route-pending"), (12, "too-large")]
    assert left_over(watcher, delivered=[12, 13], acknowledged=[], receipted=[]) == [
        (30, "route-pending"), (12, "too-large"), (13, "not-acknowledged")]


def test_a_receipted_run_is_never_left_over() -> None:
    assert left_over([(11, "unbound")], delivered=[11], acknowledged=[11], receipted=[11]) == []
