"""Issue 18: GitHub stamps comments to the second; the watcher's baseline after a steer is an instant.

A comment posted later in the same second as a steer's snapshot is delivered exactly once: not
dropped as an empty delta (which would leave its run to the queued run, a full agent run for
nothing), and not carried again by the next steer.  Start opens the window at my run's second
too, without handing my run its own triggering comment.
"""

from __future__ import annotations

from fullsend.core.scalars import format_time
from fullsend.core.watch.settle import Outcome
from fullsend.simulator.fixtures import FIX_CREATED_AT, add_follow_up_run
from tests.app.watch.watch_rig import Rig


def _command(rig: Rig, body: str, created_at: str, run_at: str) -> int:
    comment = rig.sim.add_comment(7, body, "reviewer", created_at=created_at)
    add_follow_up_run(rig.sim, comment_id=comment["id"], actor="reviewer", created_at=run_at)
    return int(comment["id"])


def test_a_comment_later_in_the_second_of_a_steer_is_delivered_exactly_once(rig: Rig) -> None:
    _command(rig, "/fs-review first ask", "2026-09-03T10:05:00Z", "2026-09-03T10:05:02Z")
    w = rig.watcher(max_steers=3)
    assert w.poll_and_steer() is Outcome.STEERED
    baseline = w.result().baseline
    assert baseline is not None and baseline.microsecond != 0  # a runner instant, finer than GitHub's stamps
    second = format_time(baseline)  # GitHub's stamp of a comment posted later in that same second
    _command(rig, "/fs-review second ask, same second", second, format_time(rig.clock.now()))
    assert w.poll_and_steer() is Outcome.STEERED  # not an empty delta
    _first, again = rig.steerer.messages
    assert "second ask, same second" in again.text and "first ask" not in again.text
    rig.sim.move_head(7, "b" * 40)
    rig.accept(90, created_at=format_time(rig.clock.now()))
    assert w.poll_and_steer() is Outcome.STEERED
    third = rig.steerer.messages[-1]
    assert "second ask" not in third.text and "first ask" not in third.text  # none delivered twice
    assert list(w.result().left_to_queued) == []


def test_start_opens_the_window_at_my_runs_second_without_my_own_trigger(rig: Rig) -> None:
    mine = rig.sim.add_comment(7, "/fs-review the ask my run works on", "reviewer", created_at=FIX_CREATED_AT)
    rig.sim.update_workflow_run(rig.fix.my_run_id, display_title=f"org/repo#7 comment:{mine['id']}")
    # In the same second as my run's creation: a later command and its (fresh, larger-id) run.
    _command(rig, "/fs-review and the rollback", FIX_CREATED_AT, FIX_CREATED_AT)
    w = rig.watcher()
    assert w.result().me is not None and w.result().me.trigger_comment_id == mine["id"]
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert "and the rollback" in msg.text and "the ask my run works on" not in msg.text


def test_a_run_started_from_a_review_thread_keeps_title_binding_and_never_gets_its_own_trigger(rig: Rig) -> None:
    """docs/adopting.md "The run-name contract": my own run titled ``review_comment:<id>`` keeps
    title binding on, and the thread comment it works on is not news to it."""
    mine = rig.sim.add_thread_comment(7, "/fs-review the thread my run works on", "reviewer", created_at=FIX_CREATED_AT)
    rig.sim.update_workflow_run(rig.fix.my_run_id, display_title=f"org/repo#7 review_comment:{mine['id']}")
    _command(rig, "/fs-review and the rollback", FIX_CREATED_AT, FIX_CREATED_AT)
    w = rig.watcher()
    me = w.result().me
    assert me is not None and (me.trigger_thread_id, me.trigger_comment_id, me.run_name) == (
        mine["id"],
        0,
        "org/repo#7",
    )
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert "and the rollback" in msg.text and "the thread my run works on" not in msg.text
