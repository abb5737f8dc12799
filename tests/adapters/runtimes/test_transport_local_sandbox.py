"""The local sandbox: group lifecycle, verified stop, the Error double."""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.confinement import proc
from fullsend.adapters.sandbox.files import write_without_following
from fullsend.adapters.sandbox.local import LocalSandbox
from fullsend.errors import SandboxError
from fullsend.ports import Launch
from tests.doubles.error_sandbox import ErrorSandbox


def test_stop_ends_every_exec_and_start_keeps_disk(tmp_path: Path) -> None:
    sb = LocalSandbox("sb", tmp_path)
    try:
        assert sb.phase() == "Ready"
        (sb.root / "kept.txt").write_text("disk state")
        pgid = sb.pgid
        child = proc.spawn(["sleep", "60"], env={"PATH": "/usr/bin:/bin"}, process_group=pgid)
        assert child.pid in proc.group_members(pgid)
        sb.stop(timeout_s=3.0)
        assert sb.phase() == "Stopped" and proc.group_members(pgid) == []
        child.wait(timeout=2)
        sb.start(timeout_s=30)
        assert sb.phase() == "Ready" and sb.pgid != pgid
        assert (sb.root / "kept.txt").read_text() == "disk state"
        out = sb.exec("printf '%s' \"$(cat kept.txt)\"", timeout_s=5)
        assert (out.stdout, out.exit_code) == ("disk state", 0)
    finally:
        sb.delete()
    assert not sb.root.exists()


def test_forced_error_refuses_stop_start_exec(tmp_path: Path) -> None:
    sb = ErrorSandbox("sb", tmp_path)
    try:
        sb.force_error_now()
        assert sb.phase() == "Error"
        for action in (lambda: sb.stop(1.0), lambda: sb.start(1.0), lambda: sb.exec("true", 1.0)):
            with pytest.raises(SandboxError, match="current phase: Error"):
                action()
    finally:
        sb.delete()


def test_error_after_start_hook_leaves_the_sandbox_in_error(tmp_path: Path) -> None:
    sb = ErrorSandbox("sb", tmp_path)
    try:
        sb.force_error_after_start(delay_s=0.05)
        assert sb.phase() == "Ready"  # only the NEXT start flips
        sb.stop(2.0)
        sb.start(30)
        import threading

        threading.Event().wait(0.1)
        assert sb.phase() == "Error"
    finally:
        sb.delete()


class _SteppedClock:
    """A ``fullsend.ports.Clock`` whose monotonic seconds move only when the test says so."""

    def __init__(self) -> None:
        self.seconds = 100.0

    def now(self):  # pragma: no cover - the sandbox reads only monotonic
        raise AssertionError("the local sandbox reads only monotonic time")

    def monotonic(self) -> float:
        return self.seconds

    def sleep(self, seconds: float) -> bool:  # pragma: no cover
        raise AssertionError("the local sandbox never sleeps on the clock")


def test_the_error_after_start_hook_runs_on_the_injected_clock(tmp_path: Path) -> None:
    clock = _SteppedClock()
    sb = ErrorSandbox("sb", tmp_path, clock=clock)
    try:
        sb.force_error_after_start(delay_s=5.0)
        sb.stop(2.0)
        sb.start(30)
        clock.seconds += 4.9
        assert sb.phase() == "Ready"
        clock.seconds += 0.1
        assert sb.phase() == "Error"
    finally:
        sb.delete()


def test_exec_timeout_kills_only_the_command(tmp_path: Path) -> None:
    sb = LocalSandbox("sb", tmp_path)
    try:
        with pytest.raises(proc.CommandTimeout):
            sb.exec("sleep 30", timeout_s=0.3)
        assert sb.phase() == "Ready"
    finally:
        sb.delete()


@pytest.mark.parametrize(
    "environ",
    [
        {"FULLSEND_TEST_HOOKS": "1", "FULLSEND_TEST_SANDBOX_ERROR_AFTER_START": "1"},
        {"FULLSEND_TEST_SANDBOX_ERROR_AFTER_START": "1"},
        {"FULLSEND_TEST_HOOKS": "1"},
    ],
    ids=["both-knobs", "knob-alone", "test-mode-alone"],
)
def test_the_shipped_factory_reads_no_error_knob(
    tmp_path: Path, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Error double lives in tests/doubles: no variable of a workflow can arm the product's sandboxes."""
    from fullsend.adapters.sandbox.local import local_sandbox_factory

    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    sb = local_sandbox_factory(tmp_path)("sb")
    try:
        assert type(sb) is LocalSandbox and sb.root.parent == tmp_path and sb.phase() == "Ready"
        sb.stop(2.0)
        sb.start(30)
        import threading

        threading.Event().wait(0.2)
        assert sb.phase() == "Ready"
    finally:
        sb.delete()


def test_a_planted_symlink_at_the_feeder_pid_file_does_not_redirect_the_write(tmp_path: Path) -> None:
    """The child owns the config folder; a link it plants at the pid file's name is replaced by a
    fresh file, and the file it points at keeps its bytes (docs/architecture.md "Sandboxes")."""
    target = tmp_path / "root-owned.conf"
    target.write_text("precious\n")
    (tmp_path / "sandboxes").mkdir()
    sb = LocalSandbox("sb", tmp_path / "sandboxes")
    try:
        config = sb.root / "claude-config"
        config.mkdir()
        mailbox = config / "steer-inbox.ndjson"
        mailbox.write_text("")
        pid_file = config / "steer-feeder.pid"
        pid_file.symlink_to(target)
        process = sb.launch(
            Launch(("cat",), {"PATH": "/usr/bin:/bin"}, sb.root, mailbox=mailbox, feeder_pid_file=pid_file)
        )
        assert target.read_text() == "precious\n"
        assert not pid_file.is_symlink()
        pid = int(pid_file.read_text())
        assert pid in proc.group_members(sb.pgid)
        sb.stop(timeout_s=3.0)
        assert process.wait(timeout_s=2) is not None
    finally:
        sb.delete()


def test_a_pid_file_whose_folder_is_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "config").symlink_to(elsewhere)
    with pytest.raises(SandboxError, match="without following links"):
        write_without_following(tmp_path / "config" / "steer-feeder.pid", b"1\n")
    assert list(elsewhere.iterdir()) == []
