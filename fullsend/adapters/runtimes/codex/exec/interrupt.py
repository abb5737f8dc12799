"""Codex interrupt: sandbox stop + start + settle check (docs/architecture.md "Codex").

Stopping the whole sandbox (not killing an exec client) is what ends the running codex process
and everything it started.  After the start, only a ``Ready`` phase read that *began*
after the settle window confirms the sandbox stays up; a flip to any other phase, or no
confirming read before the deadline, loses the session (``SteerSessionLost``).  Nothing is
retried after a lost session.  Every step has its own bound; the whole is ≤ 97 s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from fullsend.adapters.runtimes.codex.exec.queue import InterruptNotStopped
from fullsend.adapters.sandbox.shell import sanitize_output
from fullsend.errors import FullsendError, SandboxError, SteerSessionLost
from fullsend.ports import Sandbox

STOP_TIMEOUT_S = 60.0
START_TIMEOUT_S = 30.0
CODEX_START_SETTLE_WINDOW_S = 2.0
CODEX_START_SETTLE_CONFIRM_S = 5.0
PHASE_POLL_S = 0.1
PHASE_READ_BOUND_S = 10.0
CODEX_STEER_INTERRUPT_BOUND_S = (
    STOP_TIMEOUT_S + START_TIMEOUT_S + CODEX_START_SETTLE_WINDOW_S + CODEX_START_SETTLE_CONFIRM_S
)
PHASE_READY = "Ready"


@dataclass(frozen=True)
class SettlePolicy:
    """Bounds of one interrupt; tests shrink the window, confirm and poll."""

    window_s: float = CODEX_START_SETTLE_WINDOW_S
    confirm_s: float = CODEX_START_SETTLE_CONFIRM_S
    poll_s: float = PHASE_POLL_S
    read_bound_s: float = PHASE_READ_BOUND_S
    stop_timeout_s: float = STOP_TIMEOUT_S
    start_timeout_s: float = START_TIMEOUT_S


def read_phase_bounded(sandbox: Sandbox, bound_s: float) -> str:
    """``sandbox.phase()`` in a worker thread, bounded by ``bound_s``; raises ``SandboxError``."""
    box: dict[str, object] = {}

    def read() -> None:
        try:
            box["phase"] = sandbox.phase()
        except Exception as exc:  # reported as a read error below
            box["error"] = exc

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(max(0.0, bound_s))
    if worker.is_alive():
        raise SandboxError(f"reading the sandbox phase took longer than {bound_s:g} s")
    if "error" in box:
        raise SandboxError(sanitize_output(str(box["error"])))
    return str(box["phase"])


def stop_start_sandbox(sandbox: Sandbox, policy: SettlePolicy, monotonic: Callable[[], float]) -> None:
    """Interrupt a running codex turn by stopping and restarting ``sandbox``.

    Raises ``InterruptNotStopped`` (stop failed, sandbox still Ready: nothing happened) or
    ``SteerSessionLost`` (the sandbox did not come back).  Not cancellable: a stop that landed
    is always followed by a start.
    """
    try:
        sandbox.stop(policy.stop_timeout_s)
    except FullsendError as stop_err:
        _after_failed_stop(sandbox, policy, monotonic, stop_err)
        return
    try:
        sandbox.start(policy.start_timeout_s)
    except FullsendError as exc:
        raise SteerSessionLost(
            f"the sandbox was stopped for a steer but did not start again: {sanitize_output(str(exc))}"
        ) from exc
    settle_after_start(sandbox, policy, monotonic)


def _after_failed_stop(
    sandbox: Sandbox, policy: SettlePolicy, monotonic: Callable[[], float], stop_err: Exception
) -> None:
    try:
        phase = read_phase_bounded(sandbox, policy.read_bound_s)
    except SandboxError:
        phase = ""
    if phase == PHASE_READY:
        raise InterruptNotStopped(f"the sandbox was not stopped: {sanitize_output(str(stop_err))}")
    try:
        sandbox.start(policy.start_timeout_s)
    except FullsendError as exc:
        raise SteerSessionLost(
            f"the sandbox stop was not confirmed ({sanitize_output(str(stop_err))}) and it did not start "
            f"again: {sanitize_output(str(exc))}"
        ) from exc
    settle_after_start(sandbox, policy, monotonic)


def settle_after_start(sandbox: Sandbox, policy: SettlePolicy, monotonic: Callable[[], float]) -> None:
    """Confirm the sandbox stays ``Ready`` through the settle window; else ``SteerSessionLost``."""
    started = monotonic()
    window_end = started + policy.window_s
    deadline = window_end + policy.confirm_s
    last_error = "no phase read began after the settle window"
    pause = threading.Event()
    while monotonic() < deadline:
        read_start = monotonic()
        try:
            phase = read_phase_bounded(sandbox, min(policy.read_bound_s, deadline - read_start))
        except SandboxError as exc:
            last_error = str(exc)
        else:
            if phase != PHASE_READY:
                elapsed_ms = round((monotonic() - started) * 1000)
                raise SteerSessionLost(f'the sandbox left Ready {elapsed_ms} ms after the start (phase "{phase}")')
            if read_start >= window_end:
                return
        pause.wait(max(0.0, min(policy.poll_s, deadline - monotonic())))
    raise SteerSessionLost(f"could not confirm that the sandbox stayed Ready after the start: {last_error}")
