"""The checkout's persisted credential, out of the agent's reach for the run (docs/rules.md#credential-moved).

``stash_credentials`` runs before the first child of the run (the agent CLI's ``--version`` check
included): in every git directory under the workspace it cuts from each ``config`` the
``key = value`` lines that hold a secret (actions/checkout v4's ``extraheader``), and it takes
away every file such a config includes that holds one (checkout v6's ``git-credentials-*.config``
under ``RUNNER_TEMP``), keeping the bytes, mode and owner in the action's memory only.
``CredentialStash.restore`` runs once no child is left and the trees are handed back: it puts
everything back as it was, unless the git directory changed in a way that could run code or
send the credential elsewhere (its configs, its hooks, the hooks folder ``core.hooksPath``
names); then the credential stays away and ``restore`` says why (a later step that needs it
fails loudly instead of handing the token to what the agent planted).  Every write goes through
directories opened with ``O_NOFOLLOW`` from ``/`` (docs/architecture.md "Sandboxes": root never
writes through a child's path).  Never raises.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fullsend.core.tokens.credential import cut_secret_lines
from fullsend.core.tokens.reach import secret_forms

_INCLUDE = re.compile(rb"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
_HOOKS_PATH = re.compile(rb"^\s*hookspath\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
_NOT_WALKED = frozenset({"objects", "lfs", "logs", "refs"})
_CONFIG_NAMES = frozenset({"config", "config.worktree"})
#: Bounds: folders visited looking for git directories, and the largest config or included file read.
MAX_DIRS = 100_000
MAX_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class _Kept:
    """One file as it was: where, its bytes, mode and owner."""

    path: Path
    data: bytes
    mode: int
    uid: int
    gid: int


@dataclass
class CredentialStash:
    """What was moved: configs whose lines were cut (``configs``: as they were), included files
    taken away (``files``), and per git directory its fingerprint once the cut was made."""

    configs: list[_Kept] = field(default_factory=list)
    files: list[tuple[_Kept, tuple[Path, ...]]] = field(default_factory=list)
    prints: dict[Path, str] = field(default_factory=dict)
    owner_of: dict[Path, Path] = field(default_factory=dict)  # config -> its git directory

    @property
    def moved(self) -> list[str]:
        """The files the credential was moved out of, as text, in the order found."""
        return [str(kept.path) for kept in self.configs] + [str(kept.path) for kept, _ in self.files]

    def restore(self) -> list[str]:
        """Put every moved credential back; returns one sentence per git directory (or file) left
        without it and why.  Idempotent: a second call does nothing."""
        changed = {git_dir for git_dir, before in self.prints.items() if fingerprint(git_dir) != before}
        problems = [f"{git_dir} changed during the run (its config or hooks), so the checkout's credential "
                    "was not put back there" for git_dir in sorted(changed)]
        for kept in self.configs:
            if self.owner_of[kept.path] not in changed and not _write(kept, replace=True):
                problems.append(f"{kept.path} could not be written without following a link, so the "
                                "checkout's credential was not put back there")
        for kept, git_dirs in self.files:
            if not set(git_dirs) & changed and not _write(kept, replace=False):
                problems.append(f"{kept.path} was taken (or its folder changed) during the run, so the "
                                "checkout's credential was not put back there")
        self.configs, self.files, self.prints = [], [], {}
        return problems


def stash_credentials(workspace: Path, roots: Sequence[Path], secrets: Mapping[str, str]) -> CredentialStash:
    """Move every secret (name -> value) out of the git configs under ``workspace`` and out of the
    files they include that lie under ``roots`` (the workspace, ``HOME``, ``RUNNER_TEMP``).

    Returns the ``CredentialStash`` (empty when nothing held a secret).  What cannot be moved
    (a secret outside a ``key = value`` line, an included file outside ``roots``, an unwritable
    file) is left where it is, for the reach scan to find.
    """
    forms = [form for value in secrets.values() for form in secret_forms(value)]
    stash = CredentialStash()
    if not forms:
        return stash
    real_roots = [_real(root) for root in roots if root]
    seen: set[tuple[int, int]] = set()
    for git_dir in _git_dirs(_real(workspace)):
        touched = False
        for config in _configs_in(git_dir):
            touched |= _cut_config(stash, config, git_dir, forms)
            touched |= _take_included(stash, config, git_dir, forms, real_roots, seen)
        if touched:
            stash.prints[git_dir] = fingerprint(git_dir)
    return stash


def _cut_config(stash: CredentialStash, config: Path, git_dir: Path, forms: Sequence[bytes]) -> bool:
    kept = _read(config)
    if kept is None:
        return False
    cut = cut_secret_lines(kept.data, forms)
    if not cut.cut or not _write(_Kept(config, cut.left, kept.mode, kept.uid, kept.gid), replace=True):
        return False
    stash.configs.append(kept)
    stash.owner_of[config] = git_dir
    return True


def _take_included(stash: CredentialStash, config: Path, git_dir: Path, forms: Sequence[bytes],
                   roots: Sequence[Path], seen: set[tuple[int, int]]) -> bool:
    kept_config = _read(config)
    if kept_config is None:
        return False
    taken = False
    for raw in _INCLUDE.findall(kept_config.data):
        included = _include_path(config, raw)
        if included is None or not any(included.is_relative_to(root) for root in roots):
            continue
        kept = _read(included)
        if kept is None or not any(form in kept.data for form in forms):
            continue
        st = os.lstat(included)
        if (st.st_dev, st.st_ino) in seen or not _unlink(included):
            continue
        seen.add((st.st_dev, st.st_ino))
        stash.files.append((kept, (git_dir,)))
        taken = True
    return taken


def _include_path(config: Path, raw: bytes) -> Path | None:
    value = raw.strip(b'"').decode("utf-8", errors="replace")
    if not value or value.startswith("~") or "\0" in value:
        return None
    path = Path(os.path.normpath(Path(value) if os.path.isabs(value) else config.parent / value))
    return _real(path.parent) / path.name  # no child has run yet: the links on the way are the job's own


def fingerprint(git_dir: Path) -> str:
    """A digest of what in ``git_dir`` could run code or redirect git: every config file, every
    file under a ``hooks`` folder, every link (with its target), and the folder ``core.hooksPath``
    names.  A missing or replaced ``git_dir`` gives a different digest."""
    digest = hashlib.sha256()
    try:
        if not stat.S_ISDIR(os.lstat(git_dir).st_mode):
            return "not a folder"
    except OSError:
        return "missing"
    hooks_paths: list[Path] = []
    for path in _entries(git_dir):
        _add(digest, git_dir, path)
        if path.name in _CONFIG_NAMES:
            kept = _read(path)
            hooks_paths += [_hooks_dir(git_dir, raw) for raw in _HOOKS_PATH.findall(kept.data if kept else b"")]
    for hooks in hooks_paths:
        digest.update(b"hookspath\0" + str(hooks).encode())
        for path in _walk_files(hooks):
            _add(digest, hooks, path)
    return digest.hexdigest()


def _entries(git_dir: Path) -> Iterator[Path]:
    for dirpath, dirs, files in os.walk(git_dir, followlinks=False):
        if Path(dirpath) == git_dir:
            dirs[:] = [d for d in dirs if d not in _NOT_WALKED]
        inside_hooks = "hooks" in Path(dirpath).relative_to(git_dir).parts
        for name in sorted(files) + sorted(d for d in dirs if os.path.islink(os.path.join(dirpath, d))):
            path = Path(dirpath) / name
            if name in _CONFIG_NAMES or inside_hooks or path.is_symlink():
                yield path


def _walk_files(folder: Path) -> Iterator[Path]:
    for dirpath, _, files in os.walk(folder, followlinks=False):
        for name in sorted(files):
            yield Path(dirpath) / name


def _hooks_dir(git_dir: Path, raw: bytes) -> Path:
    value = raw.strip(b'"').decode("utf-8", errors="replace")
    return Path(value) if os.path.isabs(value) else git_dir.parent / value


def _add(digest: hashlib._Hash, base: Path, path: Path) -> None:
    rel = str(path.relative_to(base)).encode()
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            digest.update(b"L\0" + rel + b"\0" + os.readlink(path).encode() + b"\0")
            return
        body = hashlib.sha256(path.read_bytes()).hexdigest().encode() if st.st_size <= MAX_FILE_BYTES * 16 else b"big"
        digest.update(b"F\0" + rel + b"\0" + f"{st.st_mode:o}:{st.st_size}".encode() + b"\0" + body + b"\0")
    except OSError:
        digest.update(b"?\0" + rel + b"\0")


def _git_dirs(workspace: Path) -> Iterator[Path]:
    for visited, (dirpath, dirs, _) in enumerate(os.walk(workspace, followlinks=False), start=1):
        if visited > MAX_DIRS:
            return
        if ".git" in dirs:
            dirs.remove(".git")
            candidate = Path(dirpath) / ".git"
            if not candidate.is_symlink():
                yield candidate


def _configs_in(git_dir: Path) -> Iterator[Path]:
    for dirpath, dirs, files in os.walk(git_dir, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _NOT_WALKED]
        for name in sorted(files):
            if name in _CONFIG_NAMES:
                yield Path(dirpath) / name


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _read(path: Path) -> _Kept | None:
    """The regular file at ``path`` (not a link, at most ``MAX_FILE_BYTES``), or ``None``."""
    try:
        dir_fd = _open_dir(path.parent)
    except OSError:
        return None
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
    except (OSError, ValueError):
        return None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None
        return _Kept(path, handle.read(MAX_FILE_BYTES + 1), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)


def _open_dir(folder: Path) -> int:
    """An fd of ``folder`` reached from ``/`` one component at a time, never through a link."""
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in folder.parts[1:]:
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write(kept: _Kept, *, replace: bool) -> bool:
    """Write ``kept`` back at its path with its mode and owner: in place of what stands there
    (``replace``, atomically) or only where nothing does.  False when it could not be done."""
    name = kept.path.name
    target = f".{name}.fullsend-{os.getpid()}" if replace else name
    try:
        dir_fd = _open_dir(kept.path.parent)
    except OSError:
        return False
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(kept.data)
            os.fchown(handle.fileno(), kept.uid, kept.gid)
            os.fchmod(handle.fileno(), kept.mode)
        if replace:
            os.replace(target, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return True
    except OSError:
        if replace:
            _quiet_unlink(target, dir_fd)
        return False
    finally:
        os.close(dir_fd)


def _unlink(path: Path) -> bool:
    try:
        dir_fd = _open_dir(path.parent)
    except OSError:
        return False
    try:
        os.unlink(path.name, dir_fd=dir_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(dir_fd)


def _quiet_unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass
