"""Each runtime tells ``on_ack`` of an acknowledgement the moment it happens, while the agent runs,
outside its own mutex; a withdrawn acknowledgement is told too (docs/architecture.md
"Acknowledgement", "Threads and time")."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.claude.stream import claude_input_line
from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy
from fullsend.adapters.runtimes.codex.exec.queue import CodexSteerQueue
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.adapters.runtimes.feed import SteerFeed
from fullsend.adapters.runtimes.pi.runtime import PiRuntime
from fullsend.adapters.runtimes.pi.stream import pi_input_line
from fullsend.core.watch.steer import SteerMessage, SteerResult
from fullsend.errors import NoSteerSession
from fullsend.ports import AgentParams
from tests.support.transport_run import FixedClock, RunThread, read_log, wait_for

NOW = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
A, B = SteerMessage(501, "first update"), SteerMessage(502, "second update")
PROMPT = "Do the task"


class Heard:
    """An ``on_ack`` listener that records each call and whether the feed's mutex was free then."""

    def __init__(self, lock: object | None = None) -> None:
        self.calls: list[tuple[int, bool, bool]] = []  # (message id, acknowledged, mutex held)
        self.lock = lock

    def __call__(self, result: SteerResult, acknowledged: bool) -> None:
        held = bool(self.lock is not None and self.lock.locked())  # type: ignore[attr-defined]
        self.calls.append((result.follow_up_run_id, acknowledged, held))


def _feed(heard: Heard, warnings: list[str]) -> SteerFeed:
    feed = SteerFeed(
        lambda c, t: ("", "", 0), "/cfg/in", "/cfg/pid", FixedClock(NOW), warn=warnings.append, on_ack=heard
    )
    heard.lock = feed._mu
    return feed


def test_an_echo_tells_each_steer_it_acknowledges_once_with_the_feed_mutex_free() -> None:
    heard, warnings = Heard(), []
    feed = _feed(heard, warnings)
    feed.seed(claude_input_line(PROMPT), PROMPT, text=PROMPT)
    feed.note_echo(NOW, content=PROMPT)  # the opening prompt is no steer: nothing told
    for msg in (A, B):
        feed.append_line(msg, claude_input_line(msg.text), msg.text, text=msg.text)
    feed.note_echo(NOW, content="first update\nsecond update", parts=("first update", "second update"))
    feed.note_echo(NOW, content=A.text)  # a second echo of an acknowledged line: ignored
    assert heard.calls == [(501, True, False), (502, True, False)]
    assert feed.steer_results() == [SteerResult(501, NOW, "live"), SteerResult(502, NOW, "live")]
    assert warnings == []


def test_a_refusal_after_an_acceptance_is_told_as_a_withdrawal() -> None:
    heard, warnings = Heard(), []
    feed = _feed(heard, warnings)
    feed.seed(pi_input_line("p1", PROMPT), "p1", text=PROMPT)
    feed.append_line(A, pi_input_line("s1", A.text, "steer"), "s1", text=A.text)
    feed.note_echo(NOW, id="s1")
    feed.note_nack("s1")
    feed.note_nack("s1")  # already retired: nothing more
    assert heard.calls == [(501, True, False), (501, False, False)]
    assert feed.steer_results() == []
    assert len(warnings) == 1


def test_a_failing_listener_is_a_warning_and_the_acknowledgement_stands() -> None:
    warnings: list[str] = []

    def broken(result: SteerResult, acknowledged: bool) -> None:
        raise RuntimeError("listener bug")

    feed = SteerFeed(lambda c, t: ("", "", 0), "/cfg/in", "/cfg/pid", FixedClock(NOW), warnings.append, on_ack=broken)
    feed.append_line(A, pi_input_line("s1", A.text, "steer"), "s1", text=A.text)
    feed.note_echo(NOW, id="s1")
    assert feed.steer_results() == [SteerResult(501, NOW, "live")]
    assert warnings == ["A run callback failed: RuntimeError: listener bug"]


def test_codex_exec_tells_the_steer_when_its_resume_reports_the_thread_and_not_again() -> None:
    heard = Heard()
    queue = CodexSteerQueue("sb", lambda _n: None, FixedClock(NOW), on_ack=heard)
    heard.lock = queue._mu
    queue.enqueue(A)
    msg, failures = queue.take_pending() or (None, 0)
    assert msg is not None
    queue.stake_delivery(msg, failures, NOW)
    assert heard.calls == []  # staked: not delivered yet
    queue.note_thread_id("th-1")
    assert heard.calls == [(501, True, False)]  # the resume reported the thread: delivered now
    queue.confirm_delivery(True)
    assert heard.calls == [(501, True, False)] and queue.steer_results() == [SteerResult(501, NOW, "resume")]


def test_codex_exec_withdraws_a_told_steer_its_resume_did_not_deliver_and_tells_a_late_one() -> None:
    heard = Heard()
    queue = CodexSteerQueue("sb", lambda _n: None, FixedClock(NOW), on_ack=heard)
    for msg in (A, B):
        queue.enqueue(msg)
    taken = queue.take_pending()
    assert taken is not None
    queue.stake_delivery(*taken, NOW)
    queue.note_thread_id("th-1")
    queue.confirm_delivery(False)  # not delivered after all: requeued, and the word taken back
    assert heard.calls == [(501, True, False), (501, False, False)] and queue.steer_results() == []
    taken = queue.take_pending()
    assert taken is not None and taken[0] == A
    queue.stake_delivery(*taken, NOW)
    queue.confirm_delivery(True)  # delivered without a thread report seen: told now
    assert heard.calls[-1] == (501, True, False)


# -- runs on the local sandbox against the scripted agents -------------------------------------------
def _params(cli: str, tmp_path: Path, name: str, env: dict[str, str]) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name=name, agent_cli=cli, prompt=PROMPT, workdir=work, env=env, steerable=True, timeout_s=60
    )


def _steer_when_registered(runtime: object, name: str, msg: SteerMessage) -> None:
    def attempt() -> bool:
        try:
            runtime.steer(name, msg)  # type: ignore[attr-defined]
        except NoSteerSession:
            return False
        return True

    wait_for(attempt, "the run was registered")


def _told(run: RunThread) -> list[tuple[int, str, bool, bool]]:
    return [(r.follow_up_run_id, r.mode, acknowledged, returned) for r, acknowledged, returned in run.acks]


def test_claude_code_and_pi_tell_the_ack_while_the_session_is_still_open(scripted_cli: str, tmp_path: Path) -> None:
    for runtime, name in (
        (ClaudeRuntime(sandbox_root_parent=tmp_path), "sb-c"),
        (PiRuntime(sandbox_root_parent=tmp_path), "sb-p"),
    ):
        log = tmp_path / f"{name}.ndjson"
        params = _params(scripted_cli, tmp_path, name, {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_AGENT_LOG": str(log)})
        run = RunThread(runtime, params).start()
        wait_for(lambda log=log: read_log(log) == [PROMPT], "the opening prompt reached the agent")
        _steer_when_registered(runtime, name, SteerMessage(99, "rebased onto main"))
        wait_for(lambda run=run: bool(run.acks), "the acknowledgement was told")
        assert _told(run) == [(99, "live", True, False)]  # told before settling: the run still open
        runtime.settle(name)
        result = run.join()
        assert result.steers == [run.acks[0][0]] and _told(run) == [(99, "live", True, False)], name


def test_codex_app_server_tells_the_ack_before_the_turn_ends(scripted_cli: str, tmp_path: Path) -> None:
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, "sb-cl", {"SCRIPTED_AGENT_TURN_S": "1.5"}))
    seen_at_turn_end: list[int] = []
    run.on_turn = lambda at: (seen_at_turn_end.append(len(run.acks)), runtime.settle("sb-cl"))[1]
    run.start()
    wait_for(lambda: (a := runtime._runs.lookup("sb-cl")) is not None and bool(a.parser.session.turn_id), "turn")
    runtime.steer("sb-cl", SteerMessage(77, "head moved"))
    result = run.join()
    assert _told(run) == [(77, "live", True, False)] and seen_at_turn_end == [1]
    assert result.steers == [run.acks[0][0]]


def test_codex_exec_tells_the_ack_when_the_resume_reports_its_thread(scripted_cli: str, tmp_path: Path) -> None:
    policy = SettlePolicy(window_s=0.3, confirm_s=1.0, poll_s=0.02, read_bound_s=1.0)
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=policy)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, "sb-cx", {"SCRIPTED_AGENT_TURN_S": "0.2"}))
    seen_at_turn_end: list[int] = []

    def turn_ended(at: datetime) -> None:
        seen_at_turn_end.append(len(run.acks))
        if len(run.turn_ends) == 1:
            runtime.steer("sb-cx", SteerMessage(8, "late update"))
        else:
            runtime.settle("sb-cx")

    run.on_turn = turn_ended
    result = run.start().join()
    assert _told(run) == [(8, "resume", True, False)] and seen_at_turn_end == [0, 1]
    assert result.steers == [run.acks[0][0]]
