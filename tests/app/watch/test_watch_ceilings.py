"""Ceilings through the loop (docs/architecture.md "Settle", issue 7): the seed's "one run at the cap" trace.

The trace (as issue 7 gives it): a push dispatched run A; two
authorized comments fold into steer 1; a push and a comment fold into steer 2, which reaches the
cap of 2; two more comments arrive after the watcher settled.  Here the events are tied to the
steers instead of the wall clock (each batch lands before the next poll), so nothing depends on timing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from fullsend.core.watch.steer import SteerMessage
from fullsend.simulator.fixtures import add_follow_up_run
from tests.app.watch.watch_rig import Rig, finish, run_watch


def _comment(rig: Rig, text: str, login: str, at: datetime, run_id: int) -> None:
    """A command comment at ``at`` and the shim run it fires two seconds later (named by comment id)."""
    comment = rig.sim.add_comment(7, text, login, created_at=at)
    add_follow_up_run(
        rig.sim, run_id=run_id, actor=login, comment_id=comment["id"], created_at=at + timedelta(seconds=2)
    )


def test_one_run_at_the_cap_absorbs_exactly_four_runs_and_leaves_the_rest(rig: Rig) -> None:
    t0 = rig.clock.now()
    _comment(rig, "/fs-review check the index", "maintainer-a", t0 - timedelta(seconds=20), 201)
    _comment(rig, "/fs-review and the rollback", "maintainer-b", t0 - timedelta(seconds=15), 202)

    def next_events(msg: SteerMessage) -> None:
        now = rig.clock.now()
        if msg.follow_up_run_id == 202:  # between steer 1 and the next poll: a push and a comment
            rig.sim.move_head(7, "ccc333")
            add_follow_up_run(rig.sim, run_id=203, event="pull_request_target", pull_requests=(7,), created_at=now)
            _comment(rig, "/fs-review also the new commit", "maintainer-a", now + timedelta(seconds=1), 204)
        else:  # after steer 2 reached the cap: two more comments
            _comment(rig, "/fs-review one more thing", "maintainer-b", now + timedelta(seconds=1), 205)
            _comment(rig, "/fs-review and another", "maintainer-a", now + timedelta(seconds=2), 206)

    rig.steerer.on_steer = next_events
    w = rig.watcher(poll_interval_s=0.05, max_steers=2)
    finish(run_watch(w))
    assert [d.run_ids for d in w.result().delivered] == [(201, 202), (203, 204)]
    assert w.result().steers == 2 and w.result().settle_reason == "cap-reached"
    assert rig.listings() == 2  # nothing is listed after the cap: 205 and 206 fall to the queued run
    first, second = rig.steerer.messages
    assert "Instruction from @maintainer-a: check the index" in first.text
    assert "Instruction from @maintainer-b: and the rollback" in first.text
    assert second.head_sha == "ccc333" and "Instruction from @maintainer-a: also the new commit" in second.text
    assert rig.lines("Steer cap of 2 reached") and rig.lines("[cap-reached]")
