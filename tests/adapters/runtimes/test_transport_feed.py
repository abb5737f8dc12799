"""The shared live feed against a recording fake exec (docs/architecture.md "Live feed")."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.claude.stream import claude_input_line
from fullsend.adapters.runtimes.feed import SteerFeed, append_command, seed_command, stop_feeder_command
from fullsend.adapters.runtimes.registry import SessionRegistry
from fullsend.adapters.sandbox.shell import shell_quote
from fullsend.core.watch.steer import SteerMessage, SteerResult
from fullsend.core.wire import OPENING_LINE
from fullsend.errors import DuplicateSteer, NoSteerSession, SandboxError, SteerAfterSettle
from tests.doubles.pending import lines_awaiting_echo
from tests.support.transport_run import FixedClock

T0 = datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC)
CLAUDE_MAILBOX = "/sandbox/claude-config/steer-inbox.ndjson"
CLAUDE_PID = "/sandbox/claude-config/steer-feeder.pid"


class FakeExec:
    """Records commands; answers with a scripted (stdout, stderr, exit) or raises."""

    def __init__(self, code: int = 0, stderr: str = "", error: Exception | None = None) -> None:
        self.calls: list[str] = []
        self.code, self.stderr, self.error = code, stderr, error

    def __call__(self, command: str, timeout_s: float) -> tuple[str, str, int]:
        assert timeout_s == 15.0
        self.calls.append(command)
        if self.error is not None:
            raise self.error
        return "", self.stderr, self.code


def _feed(exec_: FakeExec | None = None, mailbox: str = "/cfg/steer-inbox.ndjson", warn: list[str] | None = None):
    exec_ = exec_ or FakeExec()
    sink = warn if warn is not None else []
    return SteerFeed(exec_, mailbox, "/cfg/steer-feeder.pid", FixedClock(T0), warn=sink.append), exec_


def _msg(n: int, text: str = "t") -> SteerMessage:
    return SteerMessage(n, text)


def test_v2_poisoned_feed_refuses_append_without_exec() -> None:
    registry: SessionRegistry[SteerFeed] = SessionRegistry()
    feed, exec_ = _feed()
    registry.register("sb", feed)
    held = registry.lookup("sb")
    feed.mark_terminal()
    registry.unregister("sb", feed)
    assert registry.lookup("sb") is None
    with pytest.raises(SteerAfterSettle):
        held.append_line(_msg(1), "line", "k")  # type: ignore[union-attr]
    assert exec_.calls == []


def test_v9_seed_truncates_and_prompt_is_pending() -> None:
    feed, exec_ = _feed()
    feed.seed("line", "prompt")
    assert len(exec_.calls) == 1 and "> '/cfg/steer-inbox.ndjson'" in exec_.calls[0]
    assert feed.settle() is False


def test_v10_seed_failure_names_the_step() -> None:
    feed, _ = _feed(FakeExec(code=1, stderr="permission denied"))
    with pytest.raises(SandboxError, match="seeding the steer mailbox") as err:
        feed.seed("line", "prompt")
    assert "permission denied" in str(err.value)


def test_v15_opening_line_constant() -> None:
    assert OPENING_LINE == "Runner update: your task inputs changed after this run started."


def test_v16_duplicate_key_refused_until_acked() -> None:
    feed, exec_ = _feed()
    feed.append_line(_msg(1), "line", "same-key")
    with pytest.raises(DuplicateSteer):
        feed.append_line(_msg(2), "line", "same-key")
    assert len(exec_.calls) == 1
    feed.note_echo(T0, content="same-key")
    feed.append_line(_msg(3), "line", "same-key")
    assert len(exec_.calls) == 2


def test_v17_nack_retires_without_result() -> None:
    feed, _ = _feed()
    feed.seed("p", "p1")
    feed.note_echo(T0, id="p1")
    feed.note_turn_end()
    feed.append_line(_msg(1), "line", "rpc-id-1")
    assert feed.note_nack("rpc-id-1") is False  # not settled yet
    assert feed.steer_results() == []
    assert feed.settle() is True


def test_v18_nack_of_unknown_id_changes_nothing() -> None:
    feed, _ = _feed()
    feed.seed("p", "p1")
    assert feed.note_nack("never-sent") is False
    assert lines_awaiting_echo(feed) == 1


def test_v19_hostile_paths_and_payloads_round_trip_through_real_sh(tmp_path: Path) -> None:
    cfg = tmp_path / "steer cfg's"
    cfg.mkdir()
    canary = tmp_path / "PWNED"
    payloads = [
        f"'; touch {canary}; echo '",
        f"$(touch {canary}) `touch {canary}` %s %n \\ \"quoted\" 'single'",
        "multi\nline\tand \\n escapes",
    ]

    def real_sh(command: str, timeout_s: float) -> tuple[str, str, int]:
        done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, timeout=timeout_s, cwd=tmp_path)
        return done.stdout.decode(), done.stderr.decode(), done.returncode

    mailbox = cfg / "steer-inbox.ndjson"
    feed = SteerFeed(real_sh, str(mailbox), str(cfg / "steer-feeder.pid"), FixedClock(T0))
    lines = [claude_input_line(p) for p in payloads]
    feed.seed(lines[0], "k0")
    feed.append_line(_msg(1), lines[1], "k1")
    feed.append_line(_msg(2), lines[2], "k2")
    assert not canary.exists()
    assert mailbox.read_bytes() == "".join(line + "\n" for line in lines).encode()
    assert [json.loads(x)["message"]["content"] for x in mailbox.read_text().splitlines()] == payloads


def test_v24_input_line_is_one_line() -> None:
    line = claude_input_line("first\nsecond\nthird")
    assert "\n" not in line
    assert '"type":"user"' in line and '"role":"user"' in line
    assert line == '{"type":"user","message":{"role":"user","content":"first\\nsecond\\nthird"}}'


def test_v25_settle_after_idle_closes_once() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    assert feed.note_echo(T0, content="prompt") is False
    assert feed.note_turn_end() is False
    assert feed.settle() is True
    assert feed.settle() is False  # latched


def test_v26_settle_mid_turn_closes_at_turn_end() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    feed.note_echo(T0, content="prompt")
    assert feed.settle() is False
    assert feed.note_turn_end() is True


def test_v27_steer_pending_blocks_close_until_acked_and_turn_ends() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    feed.note_echo(T0, content="prompt")
    feed.note_turn_end()
    feed.append_line(_msg(5), "line", "steer")
    assert feed.settle() is False
    assert feed.note_echo(T0, content="steer") is False
    assert feed.note_turn_end() is True


def test_v28_append_on_closed_feed_is_refused() -> None:
    feed, exec_ = _feed()
    feed.seed("p", "prompt")
    feed.note_echo(T0, content="prompt")
    feed.note_turn_end()
    assert feed.settle() is True
    with pytest.raises(SteerAfterSettle):
        feed.append_line(_msg(1), "line", "k")
    assert len(exec_.calls) == 1


def test_v29_failed_append_records_nothing() -> None:
    exec_ = FakeExec()
    feed, _ = _feed(exec_)
    feed.seed("p", "prompt")
    feed.note_echo(T0, content="prompt")
    feed.note_turn_end()
    exec_.code, exec_.stderr = 1, "no space left on device"
    with pytest.raises(SandboxError, match="no space left on device"):
        feed.append_line(_msg(1), "line", "k")
    assert feed.settle() is True
    assert feed.steer_results() == []


def test_v30_exec_error_is_surfaced() -> None:
    feed, _ = _feed(FakeExec(error=SandboxError("gateway down")))
    with pytest.raises(SandboxError, match="gateway down"):
        feed.append_line(_msg(1), "line", "k")


def test_v31_result_carries_the_echo_observation_time() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    feed.append_line(_msg(42), "line", "steer")
    feed.note_echo(datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC), content="prompt")
    feed.note_echo(datetime(2026, 9, 16, 12, 5, 0, tzinfo=UTC), content="steer")
    assert feed.steer_results() == [SteerResult(42, datetime(2026, 9, 16, 12, 5, 0, tzinfo=UTC), "live")]


def test_v32_init_command_truncates() -> None:
    cmd = seed_command("line", "/cfg/steer-inbox.ndjson")
    assert "> '/cfg/steer-inbox.ndjson'" in cmd and ">> " not in cmd
    assert append_command("line", "/cfg/steer-inbox.ndjson").endswith(">> '/cfg/steer-inbox.ndjson'")


def test_v33_stop_feeder_command_and_failure() -> None:
    exec_ = FakeExec()
    feed = SteerFeed(exec_, CLAUDE_MAILBOX, CLAUDE_PID, FixedClock(T0))
    feed.stop_feeder()
    assert exec_.calls == ["kill \"$(cat '/sandbox/claude-config/steer-feeder.pid')\""]
    assert stop_feeder_command(CLAUDE_PID) == exec_.calls[0]
    exec_.code, exec_.stderr = 1, "no such process"
    with pytest.raises(SandboxError, match="no such process"):
        feed.stop_feeder()


def test_v34_unknown_sandbox_no_session_not_unsupported() -> None:
    runtime = ClaudeRuntime()
    with pytest.raises(NoSteerSession):
        runtime.steer("nope", _msg(1))
    runtime.settle("nope")


def test_v35_steer_writes_one_append_line() -> None:
    runtime = ClaudeRuntime()
    exec_ = FakeExec()
    feed = SteerFeed(exec_, CLAUDE_MAILBOX, CLAUDE_PID, FixedClock(T0))
    runtime._feeds.register("sb", feed)
    runtime.steer("sb", SteerMessage(99, "rebased onto main", event="pull_request_target", actor="dev"))
    assert len(exec_.calls) == 1
    cmd = exec_.calls[0]
    assert ">> '/sandbox/claude-config/steer-inbox.ndjson'" in cmd
    assert '{"type":"user"' in cmd and "rebased onto main" in cmd
    assert OPENING_LINE in cmd


def test_v41_settle_on_idle_feed_kills_once_and_mid_turn_not_at_all() -> None:
    runtime = ClaudeRuntime()
    idle_exec, busy_exec = FakeExec(), FakeExec()
    idle = SteerFeed(idle_exec, CLAUDE_MAILBOX, CLAUDE_PID, FixedClock(T0))
    busy = SteerFeed(busy_exec, CLAUDE_MAILBOX, CLAUDE_PID, FixedClock(T0))
    for feed in (idle, busy):
        feed.seed("p", "prompt")
        feed.note_echo(T0, content="prompt")
    idle.note_turn_end()
    runtime._feeds.register("idle", idle)
    runtime._feeds.register("busy", busy)
    runtime.settle("idle")
    runtime.settle("busy")
    assert [c for c in idle_exec.calls if c.startswith('kill "$(cat ')] and len(idle_exec.calls) == 2
    assert len(busy_exec.calls) == 1  # the seed only


def test_v42_close_if() -> None:
    warnings: list[str] = []
    feed, exec_ = _feed(warn=warnings)
    feed.close_if(False)
    assert exec_.calls == []
    feed.close_if(True)
    assert len(exec_.calls) == 1 and exec_.calls[0].startswith("kill ")
    exec_.code, exec_.stderr = 1, "no such process"
    feed.close_if(True)
    assert len(warnings) == 1 and "no such process" in warnings[0]


def test_v43_injected_echo_before_real_one() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    feed.note_echo(T0, content="prompt")
    feed.note_turn_end()
    feed.append_line(_msg(99), "line", "the real steer")
    assert feed.note_echo(T0, content="a line the agent wrote itself") is False
    assert feed.steer_results() == []
    feed.note_echo(T0, content="the real steer")
    assert [r.follow_up_run_id for r in feed.steer_results()] == [99]


def test_v44_stray_echoes_then_normal_close() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    for i in range(3):
        assert feed.note_echo(T0, content=f"stray {i}") is False
    assert feed.steer_results() == []
    feed.note_echo(T0, content="prompt")
    feed.note_turn_end()
    assert feed.settle() is True


def test_v45_second_echo_of_acked_key_is_ignored() -> None:
    feed, _ = _feed()
    feed.seed("p", "prompt")
    feed.note_echo(T0, content="prompt")
    feed.append_line(_msg(7), "line", "k")
    feed.note_echo(T0, content="k")
    assert feed.note_echo(T0, content="k") is False
    assert len(feed.steer_results()) == 1


def test_v46_settled_feed_refuses_steer_without_write() -> None:
    runtime = ClaudeRuntime()
    feed, exec_ = _feed()
    runtime._feeds.register("sb", feed)
    feed.settle()
    with pytest.raises(SteerAfterSettle):
        runtime.steer("sb", SteerMessage(5, "late"))
    assert exec_.calls == []


def test_shell_quote() -> None:
    assert shell_quote("it's") == "'it'\\''s'"
    assert shell_quote("") == "''"
