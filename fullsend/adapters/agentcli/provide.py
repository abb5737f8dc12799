"""The agent CLI for a run that works: installed once the pre-flight decided to run.

An image that leaves the CLIs out (the default, slim image) names where to install them in
``FULLSEND_AGENT_CLI_ROOT``; its ``bin/`` is on the image's ``PATH``.  When ``agent_cli`` is empty
and the runtime's CLI is not on ``PATH``, the plan leaves the CLI to this module, and after the
pre-flight the action runs ``python -m fullsend.adapters.agentcli.fetch`` as a child process
with the scrubbed environment of every other child (no token; docs/architecture.md "Tokens"):
pinned versions, ``sha512`` checked against the lock, no package script, ``--version`` checked.
A skip never gets here (docs/architecture.md "Agent CLI").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from fullsend.adapters.confinement import proc
from fullsend.adapters.confinement.isolation import ChildUser
from fullsend.errors import AgentCliError, SandboxError
from fullsend.ports import Clock

INSTALL_TIMEOUT_S = 15 * 60
_SHOWN_MAX = 500


def install_agent_cli(
    runtime: str,
    root: str,
    env: Mapping[str, str],
    clock: Clock,
    log: Callable[[str, str], None],
    user: ChildUser | None = None,
) -> str:
    """Install ``runtime``'s pinned CLI under ``root`` in a child process; returns its path.

    ``env`` is the child's environment (already scrubbed of every token by the caller); the
    child runs as ``user`` when given (docs/architecture.md "Child isolation"), and the parts of
    ``root`` made here belong to it.  Takes up to :data:`INSTALL_TIMEOUT_S` seconds.  Raises
    ``AgentCliError`` with the child's own message when the install fails or does not end in time.
    """
    _prepare_root(Path(root), user)
    argv = [sys.executable, "-m", "fullsend.adapters.agentcli.fetch", "--root", root, runtime]
    started = clock.monotonic()
    try:
        result = proc.run_command(argv, timeout_s=INSTALL_TIMEOUT_S, env=env, cwd=root, user=user)
    except SandboxError as exc:
        raise AgentCliError(f"the {runtime} CLI could not be installed: {exc}") from None
    found = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    if result.exit_code != 0 or runtime not in found:
        shown = " ".join((result.stderr or result.stdout).split())[-_SHOWN_MAX:] or f"exit {result.exit_code}"
        raise AgentCliError(f"the {runtime} CLI could not be installed: {shown}")
    fetched = next((line for line in result.stderr.splitlines() if line.startswith(f"{runtime} ")), runtime)
    log("info", f"Installed the pinned {fetched} in {clock.monotonic() - started:.1f} s ({found[runtime]})")
    return found[runtime]


def _prepare_root(root: Path, user: ChildUser | None) -> None:
    """Make ``root``, ``root/bin`` and ``root/lib`` where missing, owned by ``user`` when given
    (existing ones are left as they are).  Raises ``AgentCliError`` when one cannot be made."""
    try:
        for path in (root, root / "bin", root / "lib"):
            if not path.is_dir():
                path.mkdir(parents=True)
                if user is not None:
                    os.chown(path, user.uid, user.gid)
    except OSError as exc:
        raise AgentCliError(f"the agent CLI install root {root} cannot be made ({exc.strerror})") from None
