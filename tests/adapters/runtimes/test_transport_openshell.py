"""The openshell sandbox: argv as data, and a fake ``openshell`` CLI (docs/architecture.md "Sandboxes")."""

from __future__ import annotations

import sys
from datetime import UTC
from pathlib import Path

import pytest

from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy, stop_start_sandbox
from fullsend.adapters.runtimes.codex.exec.queue import InterruptNotStopped
from fullsend.adapters.runtimes.feed import SteerFeed
from fullsend.adapters.sandbox.openshell import (
    OpenShellSandbox,
    create_argv,
    env_file_text,
    exec_argv,
    launch_script,
    lifecycle_argv,
    parse_phase,
    upload_argv,
)
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import SandboxError

# A short settle window, but room to confirm: each phase read starts the fake CLI, a Python
# process, which takes well over half a second on a loaded machine.  The success path returns at
# the first Ready read after the window, so the generous bounds cost nothing when it is quick.
FAST = SettlePolicy(window_s=0.2, confirm_s=20.0, poll_s=0.02, read_bound_s=20.0)
FAKE = """#!{python}
import os, pathlib, shutil, subprocess, sys
state = pathlib.Path(os.environ["FAKE_OPENSHELL_DIR"])
args = sys.argv[1:]
with open(state / "calls.log", "a") as log:
    log.write(" ".join(args) + "\\n")
phase = state / "phase"
verb = args[1] if len(args) > 1 else ""
if verb == "get":
    print("Name: " + args[2] + "\\nPhase: " + phase.read_text().strip())
elif verb == "stop":
    if (state / "stop_fails").exists():
        sys.stderr.write("Error: gateway down\\n")
        sys.exit(1)
    phase.write_text("Stopped")
elif verb == "start":
    phase.write_text("Ready")
elif verb == "exec":
    sys.exit(subprocess.call(args[args.index("--") + 1:]))
elif verb == "upload":
    shutil.copyfile(args[3], state / pathlib.Path(args[4]).name)
"""


@pytest.fixture
def fake(tmp_path: Path) -> tuple[OpenShellSandbox, Path]:
    cli = tmp_path / "openshell"
    cli.write_text(FAKE.format(python=sys.executable))
    cli.chmod(0o755)
    (tmp_path / "phase").write_text("Ready")
    env = {"FAKE_OPENSHELL_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    return OpenShellSandbox("sb", cli=str(cli), cli_env=env, create=False), tmp_path


def _calls(state: Path) -> list[str]:
    return (state / "calls.log").read_text().splitlines()


def test_argv_as_data() -> None:
    assert create_argv("openshell", "sb", image="img", providers=("anthropic",)) == [
        "openshell",
        "sandbox",
        "create",
        "--name",
        "sb",
        "--keep",
        "--no-auto-providers",
        "--no-tty",
        "--from",
        "img",
        "--provider",
        "anthropic",
        "--detach",
        "--",
        "sleep",
        "infinity",
    ]
    assert exec_argv("openshell", "sb", "echo hi", timeout_s=15.0) == [
        "openshell",
        "sandbox",
        "exec",
        "--name",
        "sb",
        "--timeout",
        "15",
        "--",
        "sh",
        "-c",
        "echo hi",
    ]
    assert upload_argv("openshell", "sb", "work/a", "/sandbox/b") == [
        "openshell",
        "sandbox",
        "upload",
        "sb",
        "work/a",
        "/sandbox/b",
    ]
    assert lifecycle_argv("openshell", "stop", "sb") == ["openshell", "sandbox", "stop", "sb"]
    with pytest.raises(ValueError):
        lifecycle_argv("openshell", "rm", "sb")


def test_parse_phase() -> None:
    assert parse_phase("Name: sb\nPhase: Error\nImage: x\n") == "Error"
    with pytest.raises(SandboxError):
        parse_phase("Name: sb\n")


def test_env_travels_in_a_file_not_on_argv() -> None:
    text = env_file_text({"B": "it's", "A": "x y"})
    assert text == "export A='x y'\nexport B='it'\\''s'\n"
    script = launch_script(
        ["claude", "--print"],
        "/sandbox/.e.env",
        "/sandbox/workspace",
        Path("/sandbox/claude-config/steer-inbox.ndjson"),
        Path("/sandbox/claude-config/steer-feeder.pid"),
    )
    assert "it's" not in script and "tail -n +1 -f '/sandbox/claude-config/steer-inbox.ndjson'" in script
    assert script.endswith("| 'claude' '--print'")
    with pytest.raises(SandboxError):
        env_file_text({"BAD NAME": "x"})


def test_v92_default_interrupt_stops_then_starts(fake: tuple[OpenShellSandbox, Path]) -> None:
    sandbox, state = fake
    stop_start_sandbox(sandbox, FAST, _mono())
    calls = _calls(state)
    assert calls.index("sandbox stop sb") < calls.index("sandbox start sb")
    assert not any("provider" in c for c in calls)
    assert (state / "phase").read_text() == "Ready"


def test_v94_stop_failing_while_ready_is_not_stopped(fake: tuple[OpenShellSandbox, Path]) -> None:
    sandbox, state = fake
    (state / "stop_fails").write_text("1")
    with pytest.raises(InterruptNotStopped):
        stop_start_sandbox(sandbox, FAST, _mono())
    assert "sandbox start sb" not in _calls(state)


def test_mailbox_writes_go_through_exec(fake: tuple[OpenShellSandbox, Path]) -> None:
    sandbox, state = fake
    mailbox = state / "steer-inbox.ndjson"
    feed = SteerFeed(sandbox.exec, str(mailbox), str(state / "steer-feeder.pid"), _Clock())
    feed.seed('{"type":"user"}', "k0")
    feed.append_line(SteerMessage(1, "x"), "line with 'quotes'", "k1")
    assert mailbox.read_text() == '{"type":"user"}\nline with \'quotes\'\n'
    assert sum(c.startswith("sandbox exec --name sb") for c in _calls(state)) == 2


class _Clock:
    def now(self):  # type: ignore[no-untyped-def]
        from datetime import datetime

        return datetime(2026, 9, 16, tzinfo=UTC)


def _mono():  # type: ignore[no-untyped-def]
    import time

    return time.monotonic
