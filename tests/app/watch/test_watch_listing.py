"""Issue 3 acceptance, through the watcher, the simulator and the real adapter:
the 4-page bound, and a listing that shifts between page requests."""

from __future__ import annotations

from datetime import timedelta

from fullsend.core.watch.settle import Outcome
from fullsend.simulator.fixtures import add_follow_up_run
from tests.app.watch.watch_rig import LISTING, Rig, at

T_FIRST = at("2026-09-03T10:00:01Z")


def _pages(rig: Rig) -> list[str]:
    """The ``page`` values of the listing requests so far (``1`` when the query has none)."""
    return [
        r.query.get("page", ["1"])[0]
        for r in rig.sim.requests
        if r.method == "GET" and rig.sim.match("GET", LISTING)(r)
    ]


def test_450_follow_up_runs_read_exactly_4_pages_and_log_the_bound_once(rig: Rig) -> None:
    for i in range(450):  # push runs: rejected `event` from the record alone, no job read
        add_follow_up_run(rig.sim, event="push", pull_requests=(7,), created_at=T_FIRST + timedelta(seconds=i))
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.EMPTY
    assert _pages(rig) == ["1", "2", "3", "4"]
    assert all(
        r.query["per_page"] == ["100"] and r.query["created"] == [">=2026-09-03T10:00:00Z"]
        for r in rig.sim.requests
        if rig.sim.match("GET", LISTING)(r) and "created" in r.query
    )
    # The newest 400 were judged; the 50 oldest fall to the queued run (accepted limitation).
    assert len(rig.lines("[event]")) == 400
    assert w.poll_and_steer() is Outcome.EMPTY  # unchanged pages answer 304 and still link onward
    assert _pages(rig) == ["1", "2", "3", "4"] * 2
    assert len(rig.lines("[listing-bound]")) == 1


def test_a_run_arriving_between_pages_is_neither_lost_nor_double_counted(rig: Rig) -> None:
    # 150 runs, newest first: page 1 holds i = 149..50.  A run arriving after page 1 shifts page 2
    # by one, so i = 50 is served twice.  Acceptable runs sit around that seam and at both ends;
    # the rest are push runs, rejected from the record alone (no job read).
    acceptable = {0, 48, 49, 50, 51, 52, 149}
    ids, pushes = [], []
    for i in range(150):
        when = T_FIRST + timedelta(seconds=i)
        if i in acceptable:
            ids.append(rig.accept(20_000 + i, created_at=when)["id"])
        else:
            pushes.append(
                add_follow_up_run(rig.sim, run_id=20_000 + i, event="push", pull_requests=(7,), created_at=when)["id"]
            )
    rig.sim.move_head(7, "bbb222")
    late: list[int] = []
    rig.sim.on_request(
        rig.sim.match("GET", LISTING),  # right after page 1 is answered
        lambda s: late.append(
            add_follow_up_run(s, run_id=30_000, event="pull_request_target", pull_requests=(7,))["id"]
        ),
    )
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    assert _pages(rig) == ["1", "2"]
    assert w.result().delivered[0].run_ids == tuple(ids)  # each acceptable run once, oldest first
    assert all(rig.job_reads(i) == 1 for i in ids)
    rejected = {int(line.split()[2]) for line in rig.lines("[event]")}
    assert rejected == set(pushes)  # no push run was lost either
    rig.sim.move_head(7, "ccc333")
    assert w.poll_and_steer() is Outcome.STEERED  # the late run is judged on the next poll
    assert late == [30_000] and w.result().delivered[1].run_ids == (30_000,)
    assert w.result().steers == 2
