"""Example runs of the receipt's promise, kept as regular tests (docs/architecture.md "The receipt's promise").

A counterexample the state machine of ``tests/property/test_receipt_promise.py`` shrinks to is
written out here as one more example; none has been found so far.  The first example is the
promise's happy path through the same world, so a change that breaks the world itself fails here
with a readable message before the machine reports it as a counterexample.
"""

from __future__ import annotations

from fullsend.simulator.fixtures import add_comment_follow_up
from tests.property.receipt_world import FollowUp, World


def _world_with_one_update() -> tuple[World, int]:
    world = World()
    comment, run = add_comment_follow_up(world.sim, "/fs-review please check the migration")
    world.follow_ups.append(FollowUp(int(run["id"]), "comment", 1, True, int(comment["id"])))
    world.advance(61.0)  # the tick at 30 s delivers it
    return world, int(run["id"])


def test_an_acknowledged_update_is_receipted_and_its_queued_run_skips() -> None:
    world, run_id = _world_with_one_update()
    try:
        world.agent.ack()
        world.turn_end()
        world.finish("success")
        assert [m.consumed for m in world.receipts()] == [(run_id,)]
        assert world.outcome is not None and world.outcome.consumed_run_ids == str(run_id)
        assert world.skips[run_id] is not None and world.skips[run_id].rule_id == "receipt-lists-my-run"
    finally:
        world.close()


def test_a_dropped_update_gets_no_receipt_and_its_queued_run_does_the_work() -> None:
    world, run_id = _world_with_one_update()
    try:
        world.agent.drop()
        world.turn_end()
        world.finish("success")
        assert world.receipts() == [] and world.skips == {run_id: None}
        assert world.outcome is not None and world.outcome.left_over() == [f"follow-up run {run_id} [not-acknowledged]"]
    finally:
        world.close()


def test_an_acknowledged_update_of_a_failed_run_is_left_to_its_queued_run() -> None:
    world, run_id = _world_with_one_update()
    try:
        world.agent.ack()
        world.finish("crash")
        assert world.receipts() == [] and world.skips == {run_id: None}
        assert world.outcome is not None and world.outcome.outcome == "failed"
        assert world.outcome.left_over() == [f"follow-up run {run_id} [no-receipt]"]
    finally:
        world.close()
