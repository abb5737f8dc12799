"""Keep the runner's credentials out of reach of everything the action starts.

The agent runs as a child of the action (``sandbox: local``), in the same container and as the
same user, so it could read ``/proc/<action pid>/environ`` — the environment the action was
*started* with, which ``os.environ`` edits do not erase.  So ``fullsend run`` re-executes itself
once, first thing: the secrets travel to the new image through a pipe, the new process starts
with an environment that holds none of them, and it marks itself non-dumpable so a process
without ``CAP_SYS_PTRACE`` cannot read its memory either
(docs/architecture.md "Tokens").
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from collections.abc import Mapping, Sequence

#: Variables that hold credentials the agent must never reach (read by the action, then dropped).
SECRET_KEYS = (
    "INPUT_GITHUB_TOKEN",
    "INPUT_ROLE_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
)
FD_VARIABLE = "FULLSEND_SECRETS_FD"
_PR_SET_DUMPABLE = 4


def reexec_without_secrets(argv: Sequence[str]) -> None:
    """Re-execute this program with the secrets moved from the environment into a pipe.

    Returns without doing anything when there is nothing to move or this already is the
    re-executed process.  Otherwise never returns (``os.execve``).  Raises ``OSError`` only when
    the pipe cannot be made; the caller then goes on without the protection.
    """
    if FD_VARIABLE in os.environ:
        return
    secrets = {k: os.environ[k] for k in SECRET_KEYS if os.environ.get(k)}
    if not secrets:
        return
    read_fd, write_fd = os.pipe()
    payload = json.dumps(secrets).encode()
    os.write(write_fd, payload)  # far below the pipe's capacity: no reader needed yet
    os.close(write_fd)
    os.set_inheritable(read_fd, True)
    env = {k: v for k, v in os.environ.items() if k not in SECRET_KEYS}
    env[FD_VARIABLE] = str(read_fd)
    os.execve(sys.executable, [sys.executable, *argv], env)


def take_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """In the re-executed process: read the secrets from the pipe, close it, drop the marker.

    Returns ``{}`` when there is no pipe.  Also marks the process non-dumpable (Linux).
    """
    env = os.environ if environ is None else environ
    raw = env.get(FD_VARIABLE, "")
    os.environ.pop(FD_VARIABLE, None)
    _not_dumpable()
    if not raw.isdigit():
        return {}
    fd = int(raw)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        return {}
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        data = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if k in SECRET_KEYS and isinstance(v, str)}


def _not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux, or no prctl: nothing more to do
        pass
