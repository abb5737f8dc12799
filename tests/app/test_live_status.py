"""The status comment kept up to date as the run goes: coalesced, rate-limited edits that never
block the timeline, a failed edit that never fails the run, and the steered run end to end on the
simulator (docs/architecture.md "Status comments")."""

from __future__ import annotations

import re
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.app.action.agent.session import AckRows
from fullsend.app.action.status.live_status import DONE_BELOW, FINISHING, SETTLING, WORKING, LiveStatus, SteerRow
from fullsend.app.action.status.status import StatusComment
from fullsend.app.timeline import Event, Timeline
from fullsend.core.model import Comment
from fullsend.core.scalars import format_time
from fullsend.core.watch.steer import SteerMessage, SteerResult
from fullsend.errors import ForgeError, NoSteerSession
from fullsend.ports import AgentParams
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env
from tests.support.status_versions import acknowledged_at, check_live_versions, check_run_edits, comment_versions
from tests.support.transport_run import RunThread, read_log, wait_for

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


def _live(interval_s: float = 1.0) -> tuple[LiveStatus, GatedStatus, Timeline]:
    clock, status, timeline = StepClock(), GatedStatus(), Timeline()
    status.clock = clock
    status.release.set()
    live = LiveStatus(status, clock, interval_s, lambda level, text: None)  # type: ignore[arg-type]
    timeline.subscribe(live.on_event)
    return live, status, timeline


def test_an_ack_before_its_steer_row_and_a_withdrawal_are_shown_and_finish_adds_no_duplicate():
    live, _, timeline = _live()
    rows = AckRows(timeline, SystemClock())
    acked = SteerResult(101, T0 + timedelta(seconds=3))
    rows.on_ack(acked, True)  # the runtime acknowledged before ``steer`` returned
    timeline.add(T0 + timedelta(seconds=2), "steer", "steer 1", "steered", (101,))
    first = live.snapshot().steers
    rows.on_ack(SteerResult(102, T0), False)  # never shown: nothing to take back
    rows.on_ack(acked, False)
    withdrawn = live.snapshot().steers
    rows.on_ack(acked, True)
    rows.finish([acked])  # already shown: no second row
    rows.on_ack(SteerResult(103, T0), True)  # after finish: ignored
    live.close()
    assert [(r.acknowledged_at, r.withdrawn) for r in first] == [(acked.delivered_at, False)]
    assert [(r.acknowledged_at, r.withdrawn) for r in withdrawn] == [(None, True)]
    assert [(e.kind, e.run_ids) for e in timeline.of_kind("ack", "withdrawn")] == [
        ("ack", (101,)),
        ("withdrawn", (101,)),
        ("ack", (101,)),
    ]


def test_finish_adds_the_acks_not_shown_and_withdraws_the_shown_ones_the_result_drops():
    live, _, timeline = _live()
    rows = AckRows(timeline, SystemClock())
    for n, run_id in ((1, 101), (2, 102)):
        timeline.add(T0 + timedelta(seconds=n), "steer", f"steer {n}", "steered", (run_id,))
    rows.on_ack(SteerResult(101, T0 + timedelta(seconds=5)), True)
    rows.finish([SteerResult(102, T0 + timedelta(seconds=6), "resume")])  # 101 no longer counts (session lost)
    steers = live.snapshot().steers
    live.close()
    assert [(r.run_ids, r.acknowledged_at, r.withdrawn) for r in steers] == [
        ((101,), None, True),
        ((102,), T0 + timedelta(seconds=6), False),
    ]
    assert [e.kind for e in timeline.of_kind("ack", "withdrawn")] == ["ack", "ack", "withdrawn"]


def test_a_live_ack_reaches_the_status_comment_before_the_agent_exits(tmp_path: Path):
    live, status, timeline = _live()
    rows = AckRows(timeline, SystemClock())
    agent = Path(sys.executable).parent / "fullsend-scripted-agent"
    log = tmp_path / "agent.log"
    (tmp_path / "work").mkdir()
    params = AgentParams(
        "sb-live", str(agent), "Review it", tmp_path / "work", {"SCRIPTED_AGENT_LOG": str(log)}, True, 60
    )
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(runtime, params, on_ack=rows.on_ack).start()
    wait_for(lambda: read_log(log) == ["Review it"], "the opening prompt reached the agent")

    def steer() -> bool:
        try:
            runtime.steer("sb-live", SteerMessage(101, "re-check the migration"))
        except NoSteerSession:
            return False
        timeline.add(T0, "steer", "steer 1", "steered", (101,))  # as the watcher does, once steer returns
        return True

    wait_for(steer, "the steer was accepted")
    wait_for(lambda: any(r.acknowledged_at for _, _, rs in status.calls for r in rs), "an edit shows the ack")
    assert run.result is None  # the session stays open until it is settled: the agent has not exited
    runtime.settle("sb-live")
    result = run.join()
    rows.finish(result.steers)
    live.close()
    (edit_row,) = next(rs for _, _, rs in status.calls if rs and rs[0].acknowledged_at)
    assert [s.follow_up_run_id for s in result.steers] == [101]
    assert edit_row.acknowledged_at == result.steers[0].delivered_at
    assert [e.run_ids for e in timeline.of_kind("ack", "withdrawn")] == [(101,)]  # finish added no duplicate


class RecordingForge:
    """Posts and edits succeed; each edit's body is kept."""

    def __init__(self) -> None:
        self.bodies: list[str] = []

    def bounded(self, max_wait_s=None, until=None):
        return self

    def post_comment(self, number, body, credential="role"):
        return Comment(11, body, "fullsend-ai-review[bot]", "Bot")

    def edit_comment(self, comment_id, body, credential="role"):
        self.bodies.append(body)
        return Comment(comment_id, body, "fullsend-ai-review[bot]", "Bot")


def test_the_comment_says_when_an_acknowledgement_was_withdrawn():
    forge = RecordingForge()
    status = StatusComment(forge, 7, "900", "review", "", "aaa111", lambda lv, tx: None, True)  # type: ignore[arg-type]
    status.start(T0)
    assert status.progress(WORKING, [SteerRow(1, (101,), T0, None, withdrawn=True), SteerRow(2, (102,), T0, T0)])
    (body,) = forge.bodies
    lines = [line for line in body.splitlines() if line.startswith("- Steer")]
    assert lines == [
        "- Steer 1: follow-up run 101 · sent 10:00 AM UTC · acknowledgement withdrawn, not absorbed",
        "- Steer 2: follow-up run 102 · sent 10:00 AM UTC · acknowledged 10:00 AM UTC",
    ]


def test_each_row_names_who_sent_the_update_as_inline_code_so_no_mention_renders():
    forge = RecordingForge()
    status = StatusComment(forge, 7, "900", "review", "", "aaa111", lambda lv, tx: None, True)  # type: ignore[arg-type]
    status.start(T0)
    rows = [SteerRow(1, (101, 102), T0, T0, authors=("reviewer", "@octo`cat")), SteerRow(2, (103,), T0)]
    assert status.progress(WORKING, rows)
    (body,) = forge.bodies
    lines = [line for line in body.splitlines() if line.startswith("- Steer")]
    assert lines == [
        "- Steer 1: follow-up runs 101, 102 by `reviewer`, `@octo'cat` · sent 10:00 AM UTC · acknowledged 10:00 AM UTC",
        "- Steer 2: follow-up run 103 · sent 10:00 AM UTC",
    ]


def test_a_steer_rows_authors_reach_the_comments_row():
    live, _, timeline = _live()
    timeline.add(T0, "steer", "steer 1", "steered", (101,), authors=("reviewer", "pusher"))
    steers = live.snapshot().steers
    live.close()
    assert [(r.run_ids, r.authors) for r in steers] == [((101,), ("reviewer", "pusher"))]


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


def test_a_steered_run_shows_the_steer_in_its_start_comment_and_links_the_receipt(sim, tmp_path):
    """Read back as GitHub keeps them (GraphQL ``userContentEdits``): the start comment shows the
    steer acknowledged within one poll of the acknowledgement, its edits are at least the
    configured interval apart, and the terminal status links the receipt."""
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added = {}
    sim.on_request(
        sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
        lambda s: added.update(run=add_comment_follow_up(s, "/fs-review please re-check the migration")[1]),
    )
    inputs = {"status_interval_seconds": "2", "poll_interval_seconds": "2"}
    env = runner_env(tmp_path, sim, fix, inputs=inputs)
    env["SCRIPTED_AGENT_TURN_S"] = "10"  # the steered turn outlasts several edit intervals, even on a loaded machine
    run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0 and run.outputs["steers"] == "1", run.stdout + run.stderr
    follow_up = added["run"]["id"]
    start, terminal = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.role_login]
    versions = comment_versions(sim.graphql_url, fix.job_token, fix.pr, start["id"])
    acked = acknowledged_at(run.stdout)[follow_up]
    check_live_versions(versions, follow_up, acked, within_s=2, spacing_s=2)
    # the acknowledgement is shown while the agent still works, not only once it has exited
    live = [v.body for v in versions if f"Now: {WORKING}" in v.body or f"Now: {SETTLING}" in v.body]
    assert any(f"[{follow_up}](" in body and " · acknowledged " in body for body in live), versions
    assert DONE_BELOW in start["body"] and f"[{follow_up}](" in start["body"]  # not left on a stale phase
    (row,) = [line for line in start["body"].splitlines() if line.startswith("- Steer 1:")]
    assert re.search(rf"\[{follow_up}\]\([^)]+\) by `reviewer` · sent ", row), row  # who, never @reviewer
    assert "@reviewer" not in start["body"]
    (receipt,) = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    terminal_versions = comment_versions(sim.graphql_url, fix.job_token, fix.pr, terminal["id"])
    *_, linked = terminal_versions
    assert linked.body == terminal["body"] and f"Receipt: [posted]({receipt['html_url']})" in linked.body
    assert "<!-- fullsend:status:terminal -->" in terminal["body"]
    check_run_edits([versions, terminal_versions], spacing_s=2)  # the link edit too, after the closing one


def test_a_terminal_status_written_in_place_and_its_receipt_link_keep_the_spacing(sim, tmp_path):
    """The follow-up's comment comes before the start comment, so nobody comments after it and the
    terminal status is edited into it: that edit and the receipt link are each at least the
    interval after the edit before them (GraphQL ``userContentEdits``, the forge's clock)."""
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    add_comment_follow_up(sim, "/fs-review please re-check the migration")
    env = runner_env(tmp_path, sim, fix, inputs={"status_interval_seconds": "2", "poll_interval_seconds": "1"})
    run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0 and run.outputs["steers"] == "1", run.stdout + run.stderr
    (start,) = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.role_login]
    (receipt,) = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    versions = comment_versions(sim.graphql_url, fix.job_token, fix.pr, start["id"])
    tag = "<!-- fullsend:status:terminal -->"
    first_terminal = next(n for n, v in enumerate(versions) if tag in v.body)
    *progress, terminal, linked = versions[first_terminal - 1 :]
    assert progress and tag not in progress[-1].body and first_terminal >= 2  # a progress edit came first
    assert "Receipt: [posted]" not in terminal.body and f"Receipt: [posted]({receipt['html_url']})" in linked.body
    assert linked.body == start["body"]
    gaps = [(terminal.at - progress[-1].at).total_seconds(), (linked.at - terminal.at).total_seconds()]
    assert min(gaps) >= 2, gaps
    check_run_edits([versions], spacing_s=2)


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


def test_the_closing_edit_waits_out_the_spacing_left_and_no_more():
    clock, status = StepClock(), GatedStatus()
    status.clock = clock
    status.release.set()
    live = LiveStatus(status, clock, 10.0, lambda level, text: None)  # type: ignore[arg-type]
    live.on_event(steer(1, 101))
    assert status.entered.acquire(timeout=10)  # the progress edit, at t=0
    live.close()
    clock.t_s = 4.0  # the end work took 4 s of the interval
    closing: list[tuple[float, list[SteerRow]]] = []
    live.last_word(lambda steers: closing.append((clock.t_s, steers)) or True)
    live.last_word(lambda steers: closing.append((-1.0, steers)) or True)  # once per run
    live.wait_last_word()
    assert clock.waits == [6.0] and [(t, [r.run_ids for r in rows]) for t, rows in closing] == [(10.0, [(101,)])]
    assert live.edits == 2


def test_a_closing_edit_long_after_the_last_edit_is_made_at_once():
    clock, status = StepClock(), GatedStatus()
    status.clock = clock
    status.release.set()
    live = LiveStatus(status, clock, 10.0, lambda level, text: None)  # type: ignore[arg-type]
    live.on_event(steer(1, 101))
    assert status.entered.acquire(timeout=10)
    live.close()
    clock.t_s = 30.0
    closing: list[float] = []
    live.last_word(lambda steers: closing.append(clock.t_s) or True)
    live.wait_last_word()
    assert clock.waits == [] and closing == [30.0]


def test_a_cancelled_run_drops_the_closing_edit_still_waiting_and_none_without_a_progress_edit():
    status = GatedStatus()
    status.clock = StepClock()
    status.release.set()
    live = LiveStatus(status, SystemClock(), 600.0, lambda level, text: None)  # type: ignore[arg-type]
    live.on_event(steer(1, 101))
    assert status.entered.acquire(timeout=10)
    live.close()
    closing: list[list[SteerRow]] = []
    live.last_word(lambda steers: closing.append(steers) or True)
    live.wait_last_word(drop=True)  # returns without waiting out the 600 s
    idle = LiveStatus(status, SystemClock(), 600.0, lambda level, text: None)  # type: ignore[arg-type]
    idle.close()
    idle.last_word(lambda steers: closing.append(steers) or True)
    idle.wait_last_word()
    assert closing == [] and (live.edits, idle.edits) == (1, 0)


def test_the_end_edits_keep_the_runs_one_spacing_in_order_and_a_cancelled_finish_writes_at_once():
    """The terminal status written in place and the receipt link wait out the spacing the last
    progress edit left, each after the one before; the cancellation's rewrite waits for nothing."""
    forge, clock = RecordingForge(), StepClock()
    status = StatusComment(forge, 7, "900", "review", "", "aaa111", lambda lv, tx: None, True)  # type: ignore[arg-type]
    forge.list_issue_comments = lambda number, credential="role": [status.comment]  # type: ignore[attr-defined]
    status.start(T0)
    status.follow(Timeline(), clock, 10.0)  # type: ignore[arg-type]
    live = status.live
    assert live is not None and status.progress(WORKING, [])
    live.spacing.answered()  # the progress edit, answered at t=0
    clock.t_s = 3.0
    status.finish(T0, "success", "", None)
    status.receipt_posted("https://github.test/org/repo/pull/7#issuecomment-9")
    status.wait_closing_edit()
    assert clock.waits == [7.0, 10.0] and len(forge.bodies) == 3  # progress, terminal at t=10, link at t=20
    assert "Receipt: [posted](https://github.test/" in forge.bodies[-1]
    status.finish(T0, "cancelled", "the run was cancelled", None)  # right after the link edit
    status.wait_closing_edit(cancelled=True)
    assert clock.waits == [7.0, 10.0] and "Cancelled" in forge.bodies[-1] and len(forge.bodies) == 4
