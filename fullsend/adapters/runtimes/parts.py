"""What every runtime is made of besides its protocol (docs/architecture.md "Runtimes").

``RuntimeOptions`` are the keyword arguments every runtime class takes; ``runtime_parts`` fills
in their defaults in one place: a ``LocalSandbox`` under ``sandbox_root_parent``, the system
clock, the steer envelope of ``fullsend.wording`` and warnings on stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.runtimes.feed import _warn_stderr
from fullsend.adapters.sandbox import local
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import Clock, SandboxFactory

#: ``render(msg) -> envelope text`` of one steer.
Render = Callable[[SteerMessage], str]
#: ``warn(text)``: one warning line.
Warn = Callable[[str], None]


class RuntimeOptions(TypedDict, total=False):
    """The keyword arguments of every runtime class; each left out (or ``None``) takes its default."""

    sandbox_root_parent: Path | None
    clock: Clock | None
    render: Render | None
    warn: Warn | None
    sandbox_factory: SandboxFactory | None


@dataclass(frozen=True)
class RuntimeParts:
    """The parts a runtime runs with, defaults filled in (``runtime_parts``)."""

    sandbox_factory: SandboxFactory
    clock: Clock
    render: Render
    warn: Warn


def runtime_parts(options: RuntimeOptions) -> RuntimeParts:
    """``options`` with every default filled in: a local sandbox under ``sandbox_root_parent``
    (default the system temp dir; looked up at the call, so a test double armed before it counts),
    ``SystemClock``, ``render_steer`` and warnings on stderr."""
    return RuntimeParts(
        sandbox_factory=options.get("sandbox_factory")
        or local.local_sandbox_factory(options.get("sandbox_root_parent")),
        clock=options.get("clock") or SystemClock(),
        render=options.get("render") or render_steer,
        warn=options.get("warn") or _warn_stderr,
    )


def render_steer(msg: SteerMessage) -> str:
    """The envelope renderer (``fullsend.wording.render_steer``), loaded on first use: jinja2 stays
    out of what imports this module without steering (the scripted agent's ``--version`` answer)."""
    from fullsend.wording import render_steer as render

    return render(msg)
