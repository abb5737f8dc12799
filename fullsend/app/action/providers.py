"""The provider definitions the receipt check reads (docs/architecture.md "Pre-flight skips").

``<fullsend_dir>/providers/*.yaml`` comes from the checked-out repository, often a pull request,
so it is hostile input.  Only regular files inside the workspace are read, each with a size
bound, and without following a symbolic link or blocking on a FIFO: a definition that is a link
(to ``/dev/zero``, ``/proc/self/fd/1``, a file outside the workspace), a FIFO, a device, a socket
or larger than ``PROVIDER_FILE_LIMIT_BYTES`` is "unreadable", which turns the receipt check off
with one log line (fail open), like a definition that does not parse.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from fullsend.core.tokens.policy import provider_refusal

#: The largest provider definition read; a real one is a few hundred bytes.
PROVIDER_FILE_LIMIT_BYTES = 64 * 1024
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnreadableDefinition(Exception):
    """A provider definition that is not a regular file of bounded size inside the workspace."""


def providers_refusal(fullsend_dir: str, workspace: str = "") -> str | None:
    """The provider rule for ``<fullsend_dir>/providers``: ``None`` when
    receipts are honoured, else the reason.  An empty ``fullsend_dir`` refuses; with
    ``workspace`` given, a ``providers`` directory resolving outside it refuses.
    """
    if not fullsend_dir:
        return "provider definitions location unknown"
    try:
        files = read_provider_files(Path(fullsend_dir) / "providers", Path(workspace) if workspace else None)
    except UnreadableDefinition as exc:
        return f"provider definitions unreadable: {exc}"
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic-link loop (Python < 3.13)
        return f"provider definitions unreadable: {type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
    return provider_refusal(files, load_yaml=_safe_load)


def _safe_load(text: str) -> Any:
    """``yaml.safe_load``, imported only when there is a definition to read."""
    import yaml

    return yaml.safe_load(text)


def read_provider_files(providers_dir: Path, workspace: Path | None = None) -> dict[str, str] | None:
    """``{name: text}`` of every ``*.yaml``/``*.yml`` entry that is not a directory; ``None``
    when the directory does not exist.

    Raises ``UnreadableDefinition`` for a directory outside ``workspace`` (when given) or an
    entry that is a symbolic link, not a regular file, over ``PROVIDER_FILE_LIMIT_BYTES`` or not
    UTF-8; ``OSError`` on any other read error.
    """
    if not providers_dir.exists() and not providers_dir.is_symlink():
        return None
    if workspace is not None and not providers_dir.resolve().is_relative_to(workspace.resolve()):
        raise UnreadableDefinition(f"{providers_dir.name}/ lies outside the workspace")
    files = {}
    for entry in sorted(providers_dir.iterdir()):
        if entry.suffix not in (".yaml", ".yml"):
            continue
        mode = entry.lstat().st_mode
        if stat.S_ISDIR(mode):
            continue
        if stat.S_ISLNK(mode):
            raise UnreadableDefinition(f"{entry.name} is a symbolic link; only regular files are read")
        files[entry.name] = read_regular_file(entry, PROVIDER_FILE_LIMIT_BYTES)
    return files


def read_regular_file(path: Path, limit_bytes: int) -> str:
    """The UTF-8 text of ``path``, which must be a regular file (not followed when it is a link)
    of at most ``limit_bytes``.  Never blocks on a FIFO.  Raises ``UnreadableDefinition`` or
    ``OSError``."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", 40):
            raise UnreadableDefinition(f"{path.name} is a symbolic link; only regular files are read") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableDefinition(f"{path.name} is not a regular file")
        if info.st_size > limit_bytes:
            raise UnreadableDefinition(f"{path.name} is larger than {limit_bytes // 1024} KiB")
        data = os.read(fd, limit_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > limit_bytes:
        raise UnreadableDefinition(f"{path.name} is larger than {limit_bytes // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableDefinition(f"{path.name} is not UTF-8 text") from None
