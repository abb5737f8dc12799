"""The status comment kept up to date as the run goes: coalesced, rate-limited edits that never
block the timeline, a failed edit that never fails the run, and the steered run end to end on the
simulator (docs/architecture.md "Status comments")."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.app.action.live_status import DONE_BELOW, FINISHING, SETTLING, WORKING, LiveStatus, SteerRow
from fullsend.app.action.status import StatusComment
from fullsend.app.timeline import Event
from fullsend.core.model import Comment
from fullsend.core.scalars import format_time
from fullsend.errors import ForgeError
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

T0 = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)


class StepClock:
    """Monotonic time that moves only when a wait runs out: ``wait`` passes the whole timeout at
    once (or returns at once when ``wake`` is set), so a test sees every wait the editor asked for."""

    def __init__(self) -> None:
        self.t_s = 0.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.t_s

    def wait(self, wake: threading.Event, timeout_s: float) -> bool:
        if wake.is_set():
            return True
        self.waits.append(timeout_s)
        self.t_s += timeout_s
        return False


class GatedStatus:
    """Stands in for ``StatusComment.progress``: records each edit and holds it until released."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, str, list[SteerRow]]] = []
        self.entered = threading.Semaphore(0)
        self.release = threading.Event()
        self.clock: StepClock | None = None

    def progress(self, phase: str, steers: list[SteerRow]) -> bool:
        assert self.clock is not None
        self.calls.append((self.clock.t_s, phase, steers))
        self.entered.release()
        return self.release.wait(10)


def steer(n: int, run_id: int) -> Event:
    return Event(T0 + timedelta(seconds=n), "steer", f"steer {n}", "steered", (run_id,))


def test_changes_while_an_edit_is_in_flight_become_one_edit_after_the_interval():
    clock, status, log = StepClock(), GatedStatus(), []
    status.clock = clock
    live = LiveStatus(status, clock, 10.0, lambda level, text: log.append((level, text)))  # type: ignore[arg-type]
    try:
        live.on_event(steer(1, 101))
        assert status.entered.acquire(timeout=10)  # the first change is written at once
        for n, run_id in ((2, 102), (3, 103)):
            live.on_event(steer(n, run_id))
        live.on_event(Event(T0, "settle", "settled (cap-reached)", "cap-reached"))
        live.on_event(Event(T0, "poll", "poll: 0 accepted"))  # no change: no edit
        status.release.set()
        assert status.entered.acquire(timeout=10)
    finally:
        live.close()
    (t1, phase1, steers1), (t2, phase2, steers2) = status.calls
    assert (t1, phase1, [s.run_ids for s in steers1]) == (0.0, WORKING, [(101,)])
    assert (t2, phase2, [s.run_ids for s in steers2]) == (10.0, SETTLING, [(101,), (102,), (103,)])
    assert clock.waits == [10.0] and live.edits == 2 and log == []


def test_acknowledgements_and_the_agents_exit_update_the_rows_and_the_phase():
    clock, status = StepClock(), GatedStatus()
    status.clock, status.release = clock, threading.Event()
    status.release.set()
    live = LiveStatus(status, clock, 1.0, lambda level, text: None)  # type: ignore[arg-type]
    live.on_event(steer(1, 101))
    live.on_event(Event(T0 + timedelta(seconds=40), "ack", "acknowledged message 101", "", (101,)))
    live.on_event(Event(T0 + timedelta(seconds=41), "agent", "agent exited with code 0 after 2 turn(s)"))
    live.on_event(Event(T0, "ack", "acknowledged message 999", "", (999,)))  # no such steer: no change
    snapshot = live.snapshot()
    live.close()
    assert snapshot.phase == FINISHING and snapshot.version == 3
    (row,) = snapshot.steers
    assert (row.number, row.run_ids, row.acknowledged_at) == (1, (101,), T0 + timedelta(seconds=40))


def test_a_closed_editor_takes_no_more_events_and_close_returns_while_it_waits():
    clock, status = StepClock(), GatedStatus()
    status.clock = clock
    status.release.set()
    live = LiveStatus(status, clock, 600.0, lambda level, text: None)  # type: ignore[arg-type]
    live.close()
    live.on_event(steer(1, 101))
    assert status.calls == [] and live.snapshot().steers == []


class RefusingForge:
    """A forge whose every edit fails; posts succeed."""

    def __init__(self) -> None:
        self.edits = 0

    def bounded(self, max_wait_s=None, until=None):
        return self

    def post_comment(self, number, body, credential="role"):
        return Comment(11, body, "fullsend-ai-review[bot]", "Bot")

    def edit_comment(self, comment_id, body, credential="role"):
        self.edits += 1
        raise ForgeError("502 Bad Gateway", 502)


def test_a_failed_edit_is_warned_once_and_changes_nothing():
    forge, log = RefusingForge(), []
    status = StatusComment(forge, 7, "900", "review", "", "aaa111", lambda lv, tx: log.append((lv, tx)), True)  # type: ignore[arg-type]
    status.start(T0)
    row = SteerRow(1, (101,), T0)
    assert status.progress(WORKING, [row]) is False
    assert status.progress(SETTLING, [row]) is False
    assert forge.edits == 2
    assert log == [("warning", "Could not update the status comment (the run goes on): 502 Bad Gateway")]


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _edits_of(sim: GitHubSimulator, comment_id: int) -> list[str]:
    return [
        json.loads(r.body)["body"]
        for r in sim.requests
        if r.method == "PATCH" and r.path.endswith(f"/issues/comments/{comment_id}") and r.status == 200
    ]


def test_a_steered_run_shows_the_steer_in_its_start_comment_and_links_the_receipt(sim, tmp_path):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added = {}
    sim.on_request(
        sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
        lambda s: added.update(run=add_comment_follow_up(s, "/fs-review please re-check the migration")[1]),
    )
    env = runner_env(tmp_path, sim, fix, inputs={"status_interval_seconds": "1"})
    run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0 and run.outputs["steers"] == "1", run.stdout + run.stderr
    follow_up = added["run"]["id"]
    start, terminal = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.role_login]
    edits = _edits_of(sim, start["id"])
    assert any(f"Steer 1: follow-up run [{follow_up}](" in e and "Now: " in e for e in edits), edits
    assert DONE_BELOW in start["body"] and f"[{follow_up}](" in start["body"]  # not left on a stale phase
    (receipt,) = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert f"Receipt: [posted]({receipt['html_url']})" in terminal["body"]
    assert "<!-- fullsend:status:terminal -->" in terminal["body"]


def test_a_failing_edit_endpoint_leaves_the_runs_outcome_as_it_was(sim, tmp_path):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    sim.on_request(
        sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
        lambda s: add_comment_follow_up(s, "/fs-review please re-check the migration"),
    )
    sim.fail("PATCH", r"/issues/comments/\d+$", 502, times=None)
    run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"status_interval_seconds": "1"}), tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (run.outputs["outcome"], run.outputs["steers"]) == ("succeeded", "1")
    assert run.outputs["receipt_url"]
    assert "Could not update the status comment (the run goes on)" in run.stdout + run.stderr


def test_close_waits_for_an_edit_in_flight_so_nothing_lands_after_it():
    clock, status = StepClock(), GatedStatus()
    status.clock = clock
    live = LiveStatus(status, clock, 10.0, lambda level, text: None)  # type: ignore[arg-type]
    live.on_event(steer(1, 101))
    assert status.entered.acquire(timeout=10)  # the edit is in flight, held by the double
    closing = threading.Thread(target=live.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive()  # close() waits for the edit in flight
    live.on_event(steer(2, 102))  # after close began: taken no more
    status.release.set()
    closing.join(10)
    assert not closing.is_alive()
    live.close()  # idempotent: a second finish (a cancellation) waits on nothing and returns
    assert [len(c[2]) for c in status.calls] == [1]
