"""Writing into a directory a child may control, without following its links
(docs/architecture.md "Sandboxes")."""

from __future__ import annotations

import os
from pathlib import Path

from fullsend.errors import SandboxError


def write_without_following(path: Path, data: bytes) -> None:
    """Write ``data`` as a fresh file at ``path`` (mode 0644) without following any link the
    child planted (docs/architecture.md "Sandboxes": root never writes through a child's path).

    The parent directory is opened with ``O_NOFOLLOW``; whatever entry stands at the name (a
    symlink, a hard link, a file) is unlinked, not opened, and the file is created with
    ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to that directory fd, so no write reaches another
    inode.  Raises ``SandboxError`` naming ``path`` when the directory is itself a link or the
    name is taken again between the unlink and the create.
    """
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise SandboxError(f"cannot open {path.parent} without following links: {exc.strerror}") from None
    try:
        try:
            os.unlink(path.name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path.name, flags, 0o644, dir_fd=dir_fd)
    except OSError as exc:
        raise SandboxError(f"cannot create {path} as a fresh file: {exc.strerror}") from None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
