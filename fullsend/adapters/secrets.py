"""Keep the runner's credentials out of reach of everything the action starts.

The agent runs as a child of the action (``sandbox: local``), in the same container.  Under its
own uid (``fullsend.adapters.confinement.isolation``) it cannot read the action's ``/proc/<pid>/environ``;
without that isolation (the action not root) it runs as the same user and could — and that file
holds the environment the action was *started* with, which ``os.environ`` edits do not erase.
So ``fullsend run`` re-executes itself once, first thing: the secrets travel to the new image
through a memory file, the new process starts with an environment that holds none of them, and
it marks itself non-dumpable so a process without ``CAP_SYS_PTRACE`` cannot read its memory
either (docs/architecture.md "Tokens").

What moves is every entry a child must never see and the action still needs: the four runner
credentials by name, and every entry whose value (or name) holds the job token, raw or encoded,
whatever its name — a workflow that also hands ``${{ github.token }}`` to the step as
``GITHUB_TOKEN``, ``GH_TOKEN`` or any other variable leaves no copy in the new image's
environment.  The entries travel through an anonymous in-memory file (``memfd``), closed as soon
as it is read, so their size is not bounded by a pipe's capacity.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn

from fullsend.core.tokens.policy import holds_token

#: Variables that hold credentials the agent must never reach (read by the action, then dropped).
SECRET_KEYS = (
    "INPUT_GITHUB_TOKEN",
    "INPUT_ROLE_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
)
FD_VARIABLE = "FULLSEND_SECRETS_FD"
_PR_SET_DUMPABLE = 4


def secrets_to_move(environ: Mapping[str, str]) -> dict[str, str]:
    """The entries of ``environ`` to move out before the re-exec: every non-empty ``SECRET_KEYS``
    entry, and every entry whose name or value holds the job token (``INPUT_GITHUB_TOKEN``,
    stripped) raw or base64-encoded, under any name."""
    job = (environ.get("INPUT_GITHUB_TOKEN") or "").strip()
    return {k: v for k, v in environ.items() if (k in SECRET_KEYS and v) or holds_token(k, v, job)}


def reexec_without_secrets(argv: Sequence[str]) -> None:
    """Re-execute this program with ``secrets_to_move(os.environ)`` moved into a memory file.

    Returns without doing anything when there is nothing to move or this already is the
    re-executed process.  Otherwise never returns (``os.execve``).  Raises ``OSError`` only when
    the memory file cannot be made; the caller then goes on without the protection.
    """
    if FD_VARIABLE in os.environ:
        return
    secrets = secrets_to_move(os.environ)
    if not secrets:
        return
    exec_with_secrets(argv, {k: v for k, v in os.environ.items() if k not in secrets}, secrets)


def exec_with_secrets(argv: Sequence[str], environ: Mapping[str, str], secrets: Mapping[str, str]) -> NoReturn:
    """Execute this interpreter with ``argv``, the environment ``environ`` and ``secrets`` (name ->
    value) in a memory file whose descriptor ``FD_VARIABLE`` names, for :func:`take_secrets`.

    Never returns.  Raises ``OSError`` when the memory file cannot be made or ``execve`` fails
    (the memory file is then closed)."""
    fd = _memory_file(json.dumps(dict(secrets)).encode())
    env = {k: v for k, v in environ.items() if k != FD_VARIABLE}
    env[FD_VARIABLE] = str(fd)
    try:
        os.execve(sys.executable, [sys.executable, *argv], env)
    except OSError:
        os.close(fd)
        raise


def _memory_file(payload: bytes) -> int:
    """An inheritable fd, positioned at 0, of an anonymous file holding ``payload``."""
    fd = os.memfd_create("fullsend-secrets", 0)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except OSError:
        os.close(fd)
        raise
    return fd


def take_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """In the re-executed process: read the moved entries back, close the file, drop the marker.

    Returns ``{name: value}`` of every moved entry, ``{}`` when there is none.  Also marks the
    process non-dumpable (Linux).
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
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux, or no prctl: nothing more to do
        pass
