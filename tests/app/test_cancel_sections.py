"""``fullsend.app.action.cancel``: what a real SIGTERM/SIGINT does in each kind of section."""

from __future__ import annotations

import os
import signal

import pytest

from fullsend.app.action.cancel import Cancellation, RunCancelled


@pytest.fixture
def cancel():
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    cancellation = Cancellation()
    assert cancellation.install()
    yield cancellation
    cancellation.uninstall()
    assert {s: signal.getsignal(s) for s in before} == before


def _signal(signum: int = signal.SIGTERM) -> None:
    os.kill(os.getpid(), signum)
    signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a system call: the handler has run by now


def test_outside_any_section_a_signal_is_only_recorded(cancel):
    _signal(signal.SIGINT)
    assert cancel.requested.is_set() and cancel.signal_name == "SIGINT"
    with pytest.raises(RunCancelled), cancel.raising():  # ... and the next raising section stops at its entry
        pytest.fail("entered a raising section after a cancellation")


def test_a_raising_section_is_interrupted_where_it_stands(cancel):
    reached = []
    with pytest.raises(RunCancelled), cancel.raising():
        _signal()
        reached.append("after the signal")
    assert reached == [] and cancel.signal_name == "SIGTERM"


def test_a_deferred_section_runs_to_its_end_then_raises_in_the_raising_one(cancel):
    calls, reached = [], []
    cancel.on_cancel(lambda: calls.append("stop the agent"))
    with pytest.raises(RunCancelled), cancel.raising():
        with cancel.deferred():
            _signal()
            reached.append("rest of the deferred section")
        reached.append("after the deferred section")
    assert calls == ["stop the agent"] and reached == ["rest of the deferred section"]


def test_a_second_signal_does_not_interrupt_the_cancel_path(cancel):
    with pytest.raises(RunCancelled), cancel.raising():
        _signal()
    with cancel.deferred():
        _signal(signal.SIGINT)
    assert cancel.signal_name == "SIGTERM"


def test_a_callback_registered_after_the_signal_runs_at_once(cancel):
    _signal()
    calls = []
    cancel.on_cancel(lambda: calls.append(1))
    cancel.on_cancel(lambda: 1 / 0)  # an exception in a callback is dropped
    assert calls == [1]
