"""Issue 33: waiting for a child's exit blocks; it never polls (docs/architecture.md "Threads and time").

``Popen.wait(timeout=…)`` calls ``waitpid(WNOHANG)`` in a loop (about 20 times a second); an
``ExitWatch`` calls ``waitpid`` once, after the exit.  The count of ``os.waitpid`` calls made
while a wait times out is the proof, on both of its ways to block: the pidfd and, where pidfds
are missing, the waiter thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from fullsend.adapters.confinement import exitwait
from fullsend.adapters.confinement.exitwait import ExitWatch

SLEEPER = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # runs until its stdin closes


@pytest.fixture(params=["pidfd", "waiter-thread"])
def way(request, monkeypatch):
    if request.param == "waiter-thread":
        monkeypatch.setattr(exitwait, "_open_pidfd", lambda pid: None)
    return request.param


def _counting_waitpid(monkeypatch) -> list[tuple[int, int]]:
    calls: list[tuple[int, int]] = []
    real = os.waitpid

    def waitpid(pid: int, options: int) -> tuple[int, int]:
        calls.append((pid, options))
        return real(pid, options)

    monkeypatch.setattr(os, "waitpid", waitpid)
    return calls


def test_a_timed_out_wait_never_polls_and_the_exit_is_then_seen(monkeypatch, way):
    proc = subprocess.Popen(SLEEPER, stdin=subprocess.PIPE)
    watch = ExitWatch(proc)
    assert (watch._pidfd is not None) is (way == "pidfd")  # a pidfd poll, else the waiter thread
    calls = _counting_waitpid(monkeypatch)
    with pytest.raises(subprocess.TimeoutExpired):
        watch.wait(timeout_s=0.3)
    assert [c for c in calls if c[1] == os.WNOHANG] == []  # no waitpid(WNOHANG) loop
    assert proc.poll() is None
    proc.stdin.close()  # the child ends on its own
    assert watch.wait(timeout_s=30) == 0
    assert watch.wait() == 0 and proc.returncode == 0


def test_a_killed_child_reports_its_signal_as_popen_does(way):
    proc = subprocess.Popen(SLEEPER, stdin=subprocess.PIPE)
    watch = ExitWatch(proc)
    proc.send_signal(signal.SIGKILL)
    assert watch.wait(timeout_s=30) == -signal.SIGKILL
    proc.stdin.close()


def test_a_child_reaped_elsewhere_first_still_ends_the_wait(way):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    watch = ExitWatch(proc)
    assert proc.wait() == 0  # someone else reaped it
    assert watch.wait(timeout_s=30) == 0
    assert watch.wait(timeout_s=0) == 0


def test_a_zero_timeout_answers_at_once(way):
    proc = subprocess.Popen(SLEEPER, stdin=subprocess.PIPE)
    watch = ExitWatch(proc)
    with pytest.raises(subprocess.TimeoutExpired):
        watch.wait(timeout_s=0)
    proc.stdin.close()
    assert watch.wait(timeout_s=30) == 0
