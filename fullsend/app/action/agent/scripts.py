"""Pre-, post- and validation scripts: ``sh -c`` in the workspace with a scrubbed environment.

run in ``GITHUB_WORKSPACE`` with the job token scrubbed by name and by value
(docs/architecture.md "Tokens"), under the child user when the action has one
(``fullsend.adapters.confinement.isolation``); a ``pre_script`` exit 78 skips the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fullsend.adapters.confinement.isolation import ChildUser
from fullsend.adapters.confinement.proc import CommandTimeout, run_command
from fullsend.errors import SandboxError


@dataclass(frozen=True)
class ScriptResult:
    """Exit code (-1 when it could not start or timed out) and the combined output."""

    exit_code: int
    output: str


def run_script(
    command: str, env: Mapping[str, str], cwd: Path, timeout_s: float, user: ChildUser | None = None
) -> ScriptResult:
    """Run ``sh -c command`` (as ``user`` when given); never raises for the script (a
    failure to start or a timeout is exit -1)."""
    try:
        result = run_command(["sh", "-c", command], timeout_s=timeout_s, env=env, cwd=cwd, user=user)
    except CommandTimeout as exc:
        return ScriptResult(-1, str(exc))
    except SandboxError as exc:
        return ScriptResult(-1, str(exc))
    return ScriptResult(result.exit_code, (result.stdout + result.stderr)[-8192:])
