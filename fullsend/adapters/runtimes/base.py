"""What the action relies on from an agent runtime, beyond ``fullsend.ports.Runtime``
(docs/architecture.md "Runtimes"): the CLI versions it supports, how it steers, and the choice of
transport.  Every runtime of ``RUNTIMES`` implements it; no capability is probed at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from fullsend.adapters.runtimes.versions import CliVersions, Version
from fullsend.ports import AgentParams, Runtime


class AgentRuntime(Runtime, Protocol):
    """A ``Runtime`` the action can check, configure and steer."""

    #: The CLI versions this runtime supports (``check_cli_version`` refuses the others).
    cli_versions: CliVersions

    @property
    def interrupts_to_steer(self) -> bool:
        """True when a steer stops and restarts the agent (Codex exec), so settling must leave it time."""
        ...

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Why a run with ``params`` cannot be steered, or ``None``."""
        ...

    def transport_line(self, preference: str, version: Version, agent_args: Sequence[str] = ()) -> str:
        """Choose how this run steers, once, after the version check; the line that says so, or
        ``""`` for a runtime with one transport.  Raises ``ConfigError`` when the choice cannot run."""
        ...


class RuntimeFactory(Protocol):
    """A runtime class of ``RUNTIMES``: its supported CLI versions, and how the action makes one."""

    cli_versions: CliVersions

    def __call__(
        self,
        *,
        warn: Callable[[str], None],
        sandbox_factory: Callable[[str], Any],
    ) -> AgentRuntime: ...
