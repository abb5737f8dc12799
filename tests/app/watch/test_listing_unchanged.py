"""A listing whose pages all answered 304 is not judged again while nothing is undecided
(docs/architecture.md "Listing gate"); a pending run is judged again whatever the pages say."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from fullsend.app.watch import cycle
from fullsend.core.watch.settle import Outcome
from fullsend.simulator.server import GitHubSimulator
from tests.app.watch.watch_rig import CLOCK_ORIGIN, Rig, at, make_rig
from tests.doubles.virtual_clock import VirtualClock


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = VirtualClock(at(CLOCK_ORIGIN))
    with GitHubSimulator(clock=clock.now) as sim:
        yield make_rig(sim, clock)  # type: ignore[arg-type]


def _count_judged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    judged: list[int] = []
    real = cycle.provenance.judge_record

    def counting(run, me, seen):  # type: ignore[no-untyped-def]
        judged.append(run.id)
        return real(run, me, seen)

    monkeypatch.setattr(cycle.provenance, "judge_record", counting)
    return judged


def test_an_unchanged_listing_is_not_judged_again(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    rig.accept(201, pull_requests=(8,))  # another item's run: rejected [item] each time it is judged
    w = rig.watcher(deadline=rig.clock.now() + timedelta(hours=1))
    judged = _count_judged(monkeypatch)
    assert w.poll_and_steer() is Outcome.EMPTY and sorted(judged) == [201, rig.fix.my_run_id]
    rig.sim.reset_requests()
    assert w.poll_and_steer() is Outcome.EMPTY and w.poll_and_steer() is Outcome.EMPTY
    assert rig.sim.request_count(status=304) == 2 and len(rig.sim.requests) == 2  # the page, twice
    assert sorted(judged) == [201, rig.fix.my_run_id] and w.state.polls == 3
    rig.accept(202, pull_requests=(8,))  # the page changes: judged again, every run
    assert w.poll_and_steer() is Outcome.EMPTY and sorted(judged[2:]) == [201, 202, rig.fix.my_run_id]


def test_a_pending_run_is_judged_again_on_an_unchanged_listing(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    pending = rig.accept(201, route="in_progress")
    rig.sim.move_head(7, "bbb222")  # what the run carries: the head moved
    w = rig.watcher(deadline=rig.clock.now() + timedelta(hours=1))
    assert w.poll_and_steer() is Outcome.RETRY and rig.job_reads(201) == 1
    route = rig.sim.jobs_of(pending["id"])[0]["id"]
    rig.sim.update_job(route, status="completed", conclusion="success")  # the listing's page stays the same
    rig.sim.reset_requests()
    assert w.poll_and_steer() is Outcome.STEERED and rig.steerer.calls == [("steer", 201)]
    assert rig.sim.request_count("GET", r"/fullsend\.yml/runs$", status=304) == 1 and rig.job_reads(201) == 1
