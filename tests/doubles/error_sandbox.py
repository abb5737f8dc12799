"""A local sandbox that lands in ``Error`` like NVIDIA/OpenShell#3308: in ``Error`` stop,
start and exec are refused and its processes end.

``ErrorSandbox.force_error_after_start(delay_s)`` flips the phase to ``Error`` ``delay_s`` after the
next ``start``, on the injected clock's monotonic seconds; ``force_error_now`` at once.  For the
whole action run as a subprocess, :func:`arm_every_local_sandbox` makes the shipped factory build
armed ones: :data:`SITECUSTOMIZE` calls it when the test puts it on ``PYTHONPATH`` (with the
repository root, so this module imports) and sets ``FULLSEND_TEST_SANDBOX_ERROR_AFTER_START=1``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.confinement import proc
from fullsend.adapters.sandbox import local
from fullsend.adapters.sandbox.process import LocalProcess
from fullsend.errors import SandboxError
from fullsend.ports import Clock

PHASE_ERROR = "Error"
ARM_ENV = "FULLSEND_TEST_SANDBOX_ERROR_AFTER_START"
#: Written as ``sitecustomize.py`` into a folder the test puts first on the child's ``PYTHONPATH``.
SITECUSTOMIZE = f"""
import os
if os.environ.get({ARM_ENV!r}) == "1":
    from tests.doubles.error_sandbox import arm_every_local_sandbox
    arm_every_local_sandbox()
"""


class ErrorSandbox(local.LocalSandbox):
    """A ``LocalSandbox`` whose phase can be forced to ``Error``."""

    def __init__(self, name: str, root_parent: Path | None = None, clock: Clock | None = None, **kw: Any) -> None:
        self._clock: Clock = clock or SystemClock()
        self._error_delay_s: float | None = None
        self._error_at: float | None = None
        super().__init__(name, root_parent, **kw)

    def force_error_after_start(self, delay_s: float = 0.07) -> None:
        """After the next ``start`` the phase flips to ``Error`` after ``delay_s`` seconds."""
        self._error_delay_s = delay_s

    def force_error_now(self) -> None:
        """The sandbox is in ``Error`` from now on (its processes end)."""
        self._error_at = self._clock.monotonic()

    def phase(self) -> str:
        if self._error_at is not None and self._clock.monotonic() >= self._error_at:
            leader = self._leader
            if leader is not None and leader.poll() is None:
                proc.kill_group(leader.pid, grace_s=0.2)
                self._reap()
            return PHASE_ERROR
        return super().phase()

    def _refuse_in_error(self, verb: str, wanted: str) -> None:
        if self.phase() == PHASE_ERROR:
            raise SandboxError(f"sandbox must be {wanted} to {verb} (current phase: {PHASE_ERROR})")

    def stop(self, timeout_s: float) -> None:
        self._refuse_in_error("stop", local.PHASE_READY)
        super().stop(timeout_s)

    def start(self, timeout_s: float) -> None:
        self._refuse_in_error("start", local.PHASE_STOPPED)
        super().start(timeout_s)
        if self._error_delay_s is not None:
            self._error_at = self._clock.monotonic() + self._error_delay_s

    def delete(self) -> None:
        self._error_at = None  # a forced Error never keeps the processes or the root
        super().delete()

    def exec(self, command: str, timeout_s: float) -> proc.ExecResult:
        self._refuse_in_error("exec", local.PHASE_READY)
        return super().exec(command, timeout_s)

    def launch(self, *args: Any, **kwargs: Any) -> LocalProcess:
        self._refuse_in_error("exec", local.PHASE_READY)
        return super().launch(*args, **kwargs)


def arm_every_local_sandbox() -> None:
    """Make the shipped ``local_sandbox_factory`` build sandboxes that land in ``Error`` right
    after their next ``start`` (the runtimes import the factory after this runs)."""

    def factory(root_parent: Path | None = None, user: Any = None) -> Callable[[str], ErrorSandbox]:
        def make(name: str) -> ErrorSandbox:
            sandbox = ErrorSandbox(name, root_parent, user=user)
            sandbox.force_error_after_start()
            return sandbox

        return make

    local.local_sandbox_factory = factory  # type: ignore[assignment]
