"""The delta's read errors and the head the watcher starts from,
through the real adapter and simulator."""

from __future__ import annotations

import pytest

from fullsend.core.watch.settle import Outcome
from fullsend.core.watch.start import StartRefused
from tests.app.watch.watch_rig import Rig


def test_D10_item_reads_failing_report_retry_and_name_the_first_read(rig: Rig) -> None:
    w = rig.watcher()
    rig.accept(101)
    for path in (r"/issues/7/comments$", r"/pulls/7$", r"/pulls/7/reviews$", r"/issues/7$"):
        rig.sim.fail("GET", path, 500, times=None, body={"message": "boom"})
    assert w.poll_and_steer() is Outcome.RETRY
    assert rig.lines("listing comments", level="warning")
    assert rig.steerer.messages == [] and 101 not in w.state.carry.seen


def test_D11_a_non_404_pull_request_lookup_at_start_refuses(rig: Rig) -> None:
    rig.sim.fail("GET", r"/pulls/7$", 500, times=None)
    with pytest.raises(StartRefused, match="is a pull request"):
        rig.watcher()


def test_D12_no_head_from_the_environment_takes_the_forge_head(rig: Rig) -> None:
    rig.sim.move_head(7, "live111")
    w = rig.watcher(env_head_sha="")
    assert w.state.baseline is not None and w.state.baseline.is_pull_request
    assert w.result().head == "live111"


def test_D13_the_environment_head_wins_and_the_first_delta_reports_the_move(rig: Rig) -> None:
    rig.sim.move_head(7, "moved222")
    w = rig.watcher(env_head_sha="start111")
    assert w.result().head == "start111"
    rig.accept(101)
    assert w.poll_and_steer() is Outcome.STEERED
    (msg,) = rig.steerer.messages
    assert msg.head_sha == "moved222"
    assert w.result().head == "moved222"
