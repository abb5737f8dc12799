"""Agent runtimes: a registry ``name -> runtime class`` (docs/architecture.md "Runtimes").

Each class implements ``fullsend.ports.AgentRuntime`` (the port, with ``RuntimeFactory``).  The shared live feed is
``feed.SteerFeed``; the live-run driver is ``live.LiveRuntime``.
"""

from __future__ import annotations

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.codex.runtime import CodexRuntime
from fullsend.adapters.runtimes.pi.runtime import PiRuntime
from fullsend.ports import AgentRuntime, RuntimeFactory

RUNTIMES: dict[str, RuntimeFactory] = {
    "claude": ClaudeRuntime,
    "pi": PiRuntime,
    "codex": CodexRuntime,
}

__all__ = ["RUNTIMES", "AgentRuntime", "ClaudeRuntime", "CodexRuntime", "PiRuntime"]
