"""The ``codex`` runtime: one of Codex's two transports per run (docs/runtimes.md "Codex transports").

``CodexRuntime`` is what ``runtime: codex`` gets.  Before the first iteration the action reads
the CLI's version and calls :meth:`CodexRuntime.select_transport`; from then on every
``Runtime`` and ``Steerer`` call goes to the chosen one: ``CodexAppServerRuntime`` (live,
``turn/steer``) or ``CodexExecRuntime`` (interrupt and resume).  Until a choice is made the
runtime uses exec, the transport every supported Codex has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Unpack

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.adapters.runtimes.codex.transport import CODEX_VERSIONS, TransportChoice, choose_transport
from fullsend.adapters.runtimes.parts import RuntimeOptions
from fullsend.core.cli_versions import Version
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AckListener, AgentParams, AgentRunResult, Sandbox


class CodexRuntime:
    """Codex (``fullsend.ports.Runtime`` and ``Steerer``) over the transport chosen for the run.

    Parameters as ``CodexExecRuntime``; ``settle_policy`` and ``interrupt`` concern exec only.
    """

    name = "codex"
    cli_versions = CODEX_VERSIONS

    def __init__(
        self,
        *,
        settle_policy: SettlePolicy | None = None,
        interrupt: Callable[[Sandbox], None] | None = None,
        **options: Unpack[RuntimeOptions],
    ) -> None:
        self.exec_runtime = CodexExecRuntime(settle_policy=settle_policy, interrupt=interrupt, **options)
        self.live_runtime = CodexAppServerRuntime(**options)
        self.choice: TransportChoice | None = None
        self._active: CodexExecRuntime | CodexAppServerRuntime = self.exec_runtime

    def select_transport(self, preference: str, version: Version, agent_args: Sequence[str] = ()) -> TransportChoice:
        """Choose the transport for this run (``codex_transport``, the CLI's version, ``agent_args``).

        Raises ``ConfigError`` when ``app-server`` is asked for and cannot run (see
        ``codex.transport.choose_transport``).
        """
        self.choice = choose_transport(preference, version, agent_args)
        self._active = self.live_runtime if self.choice.live else self.exec_runtime
        return self.choice

    def transport_line(self, preference: str, version: Version, agent_args: Sequence[str] = ()) -> str:
        """Choose the run's transport (``select_transport``) and return the line that says which
        and why (``codex-transport``).  Raises ``ConfigError`` as ``select_transport``."""
        return self.select_transport(preference, version, agent_args).log_line()

    @property
    def interrupts_to_steer(self) -> bool:
        """True when a steer stops and restarts the sandbox (exec), so settling must leave it time."""
        return self._active is self.exec_runtime

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        """Deliver a steer through the chosen transport (its errors as ``Steerer.steer``)."""
        self._active.steer(sandbox_name, msg)

    def settle(self, sandbox_name: str) -> None:
        """No more steers (as ``Steerer.settle``)."""
        self._active.settle(sandbox_name)

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Codex steers every run, over either transport."""
        return None

    def cancel(self, sandbox_name: str) -> None:
        """Stop the run's sandbox now; unknown name: no-op."""
        self._active.cancel(sandbox_name)

    def run(
        self,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None] | None = None,
        on_ack: AckListener | None = None,
    ) -> AgentRunResult:
        """Run one iteration on the chosen transport; never raises for agent or sandbox failures."""
        return self._active.run(params, on_turn_end, on_output, on_ack)


__all__ = ["CODEX_VERSIONS", "CodexRuntime"]
