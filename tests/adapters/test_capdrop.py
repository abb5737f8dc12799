"""``fullsend.adapters.capdrop`` on this machine (needs root): a child of a root action without a
child user keeps only the capabilities for file work, so it cannot read the non-dumpable
action's memory (docs/architecture.md "Child isolation")."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess

import pytest

from fullsend.adapters import proc
from fullsend.adapters.capdrop import KEPT_CAPABILITIES, without_capabilities
from fullsend.errors import SandboxError
from tests.support.tools import missing_tool

ENV = {"PATH": "/usr/bin:/bin"}
KEPT_MASK = f"{sum(1 << cap for cap in KEPT_CAPABILITIES):016x}"


@pytest.fixture(autouse=True)
def _root() -> None:
    if os.geteuid() != 0:
        missing_tool("root", "run the tests as root on Linux")


def _status(text: str) -> dict[str, str]:
    return {k: v.strip() for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def test_a_root_child_without_a_child_user_keeps_only_the_file_capabilities():
    result = proc.run_command(["cat", "/proc/self/status"], timeout_s=10, env=ENV)
    status = _status(result.stdout)
    assert result.exit_code == 0, result.stderr
    assert status["Uid"].split() == ["0"] * 4  # still root: the workspace is the runner's
    assert (status["CapPrm"], status["CapEff"], status["CapBnd"]) == (KEPT_MASK,) * 3
    assert (status["CapInh"], status["CapAmb"], status["NoNewPrivs"]) == ("0000000000000000", "0000000000000000", "1")


def test_the_child_cannot_read_the_memory_of_a_non_dumpable_root_process():
    """What the action is (``fullsend.adapters.secrets``): a root process marked non-dumpable."""
    holder = subprocess.Popen(["python3", "-c", "import ctypes, sys, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "
                               "print('ready', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        probe = f"open('/proc/{holder.pid}/mem', 'rb'); print('read')"
        result = proc.run_command(["python3", "-c", probe], timeout_s=20, env=ENV)
        assert result.exit_code == 1 and "PermissionError" in result.stderr, result.stdout + result.stderr
        with open(f"/proc/{holder.pid}/mem", "rb"):  # the action itself (full capabilities) can: the control
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_the_child_is_the_program_in_place_and_its_failure_is_named():
    """Same pid (so the same process group); a program that vanished after the check is exit 127."""
    popen = proc.spawn(["sh", "-c", "echo $$"], env=ENV)
    out, _ = popen.communicate(timeout=10)
    assert int(out) == popen.pid
    launcher = subprocess.run([*without_capabilities(["/nonexistent/agent"])], env=ENV, capture_output=True, text=True,
                              timeout=20)
    assert launcher.returncode == 127
    assert launcher.stderr == "fullsend: could not start /nonexistent/agent: No such file or directory\n"


@pytest.mark.parametrize(("program", "why"), [("no-such-program-here", "No such file or directory"),
                                              ("not-executable", "Permission denied"), ("a-folder", "Permission denied"),
                                              ("./missing", "No such file or directory")])
def test_a_program_that_cannot_start_fails_before_the_launcher(tmp_path, program, why):
    (tmp_path / "not-executable").write_text("#!/bin/sh\n")
    (tmp_path / "not-executable").chmod(0o644)
    (tmp_path / "a-folder").mkdir(mode=0o755)
    argv = [str(tmp_path / program) if program in ("not-executable", "a-folder") else program]
    with pytest.raises(SandboxError, match=f"could not start {os.path.basename(argv[0])}: {why}"):
        proc.spawn(argv, env=ENV, cwd=tmp_path)


def test_the_kept_capabilities_are_the_four_for_file_work():
    assert KEPT_CAPABILITIES == {0: "chown", 1: "dac_override", 3: "fowner", 4: "fsetid"}
    assert ctypes.sizeof(ctypes.c_uint32) == 4  # the launcher's capability words
