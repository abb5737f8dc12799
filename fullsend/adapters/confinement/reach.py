"""The by-value scan for secrets the agent's user can read (docs/rules.md#token-in-reach).

Every regular file under the roots (the workspace, ``HOME``, ``RUNNER_TEMP``), plus every file a
``.git/config`` includes (``[include]`` / ``[includeIf ...]`` ``path =``, where actions/checkout
v6 keeps its credential), is searched for each spelling of each secret.  Links are never
followed.  "Readable by the child" is decided from ownership and mode bits: a file or directory
the child uid owns counts as readable (its owner may chmod it), else the group bits apply when
its gid is the child's, else the other bits; a file counts only when every directory from ``/``
down to it is searchable the same way.  With the child's uid 0 (no isolation, action as root)
everything counts.  Bounded: at most ``max_files`` files and ``budget_bytes`` bytes read (a file
above ``file_cap_bytes`` is read in blocks that overlap by the longest spelling); a spent budget
makes the result incomplete (no receipt).  What the scan cannot see: a spelling inside compressed
data (``.git/objects`` is not walked: its objects are zlib-compressed; nor a ``.gz`` or ``.zip``)
and a file outside the roots that a link inside them points to (links are not followed): the
agent can decompress or follow, so docs/rules.md#token-in-reach names these as known limits.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fullsend.core.tokens.reach import ScanResult, secret_forms

_INCLUDE = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE)


@dataclass
class ScanLimits:
    """The scan's bounds: files visited, bytes read in all, and the size above which a file is
    judged binary-or-unknown."""

    max_files: int = 100_000
    budget_bytes: int = 512 * 1024 * 1024
    file_cap_bytes: int = 16 * 1024 * 1024


@dataclass
class _Scan:
    uid: int
    gid: int
    forms: list[tuple[bytes, str]]
    limits: ScanLimits
    files: int = 0
    read_bytes: int = 0
    found: list[tuple[str, str]] = field(default_factory=list)
    unknown: str = ""
    seen: set[tuple[int, int]] = field(default_factory=set)


def scan_for_secrets(
    roots: Sequence[Path],
    secrets: Mapping[str, str],
    uid: int,
    gid: int,
    limits: ScanLimits | None = None,
    *,
    encoded_only: bool = False,
) -> ScanResult:
    """Search every file ``uid``/``gid`` can read under ``roots`` for ``secrets`` (name -> value).

    ``encoded_only``: the raw spelling is not searched (a deployment's public job token, the
    simulator's, written raw in this project's own files; docs/rules.md#token-in-reach).

    Returns a ``ScanResult``; never raises (an unreadable entry is one the child cannot read
    either, or is skipped when the action itself cannot open it).
    """
    forms = [
        (form, name)
        for name, value in secrets.items()
        for form in secret_forms(value)
        if not (encoded_only and form == value.encode())
    ]
    scan = _Scan(uid, gid, forms, limits or ScanLimits())
    if not forms:
        return ScanResult()
    for root in roots:
        for path in _files_under(root):
            if not _visit(scan, path):
                return ScanResult(tuple(scan.found), False, scan.unknown)
            if path.name == "config" and path.parent.name == ".git":
                for included in _includes(path):
                    if not _visit(scan, included):
                        return ScanResult(tuple(scan.found), False, scan.unknown)
    return ScanResult(tuple(scan.found), not scan.unknown, scan.unknown)


def _files_under(root: Path) -> Iterator[Path]:
    try:
        if not root.is_dir() or root.is_symlink():
            return
    except OSError:
        return
    for dirpath, dirs, filenames in os.walk(root, followlinks=False):
        if os.path.basename(dirpath) == ".git" and "objects" in dirs:
            dirs.remove("objects")  # zlib-compressed: no spelling of a token shows there
        for name in filenames:
            yield Path(dirpath) / name


def _includes(config: Path) -> list[Path]:
    """The files ``config`` includes (relative paths against its folder; ``~/`` left out)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    paths = []
    for value in _INCLUDE.findall(text):
        value = value.strip('"')
        if value and not value.startswith("~"):
            paths.append(config.parent / value if not os.path.isabs(value) else Path(value))
    return paths


def _visit(scan: _Scan, path: Path) -> bool:
    """Search one file; False when a budget ran out (``scan.unknown`` says which)."""
    try:
        st = path.lstat()
    except (OSError, ValueError):  # ValueError: a NUL byte in an include path of .git/config
        return True
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in scan.seen:
        return True
    if not _child_reads(path, st, scan.uid, scan.gid):
        return True  # a hard link to it elsewhere may still be readable: not marked seen
    scan.seen.add((st.st_dev, st.st_ino))
    scan.files += 1
    if scan.files > scan.limits.max_files:
        scan.unknown = f"more than {scan.limits.max_files} files"
        return False
    if st.st_size > scan.limits.file_cap_bytes:
        return _judge_large(scan, path)
    if scan.read_bytes + st.st_size > scan.limits.budget_bytes:
        scan.unknown = f"more than {scan.limits.budget_bytes} bytes to read"
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return True
    scan.read_bytes += len(data)
    _match(scan, path, data)
    return True


def _judge_large(scan: _Scan, path: Path) -> bool:
    """Search a file above the cap in blocks of ``file_cap_bytes`` that overlap by the longest
    spelling, within the byte budget; False when the budget ran out."""
    overlap = max(len(form) for form, _ in scan.forms) - 1
    tail = b""
    try:
        with path.open("rb") as handle:
            while block := handle.read(scan.limits.file_cap_bytes):
                if scan.read_bytes + len(block) > scan.limits.budget_bytes:
                    scan.unknown = f"more than {scan.limits.budget_bytes} bytes to read"
                    return False
                scan.read_bytes += len(block)
                window, tail = tail + block, (tail + block)[-overlap:] if overlap else b""
                _match(scan, path, window)
    except OSError:
        return True
    return True


def _match(scan: _Scan, path: Path, data: bytes) -> None:
    for form, name in scan.forms:
        if form in data and (str(path), name) not in scan.found:
            scan.found.append((str(path), name))


def _child_reads(path: Path, st: os.stat_result, uid: int, gid: int) -> bool:
    if uid == 0:
        return True
    if not _allowed(st, uid, gid, stat.S_IRGRP, stat.S_IROTH):
        return False
    for folder in path.parents:
        try:
            fst = folder.stat()
        except OSError:
            return False
        if not _allowed(fst, uid, gid, stat.S_IXGRP, stat.S_IXOTH):
            return False
    return True


def _allowed(st: os.stat_result, uid: int, gid: int, group_bit: int, other_bit: int) -> bool:
    if st.st_uid == uid:
        return True  # its owner may chmod it
    if st.st_gid == gid:
        return bool(st.st_mode & group_bit)
    return bool(st.st_mode & other_bit)


#: The most ancestors :func:`ancestors_holding` walks (a chain longer than this is not a runner's).
MAX_ANCESTORS = 64


def ancestors_holding(
    secrets: Mapping[str, str], pid: int | None = None, reader_caps: int | None = None
) -> list[tuple[int, str, str]]:
    """The processes above ``pid`` (default: this one), up to and including PID 1, whose
    environment holds one of ``secrets`` (name -> value) in any ``secret_forms`` spelling and
    can be read by this process: ``[(pid, command, secret name)]``, nearest first.  A process
    sharing the action's uid can read the same files (docs/rules.md#token-in-reach), except one
    whose permitted capabilities are not all in ``reader_caps`` (a capability bit mask: what a
    root child keeps) when that is given: the kernel keeps its ``environ`` from such a reader.
    One whose ``environ`` cannot be read is skipped; never raises."""
    forms = [(name, form) for name, value in secrets.items() if value for form in secret_forms(value)]
    found: list[tuple[int, str, str]] = []
    current = os.getpid() if pid is None else pid
    for _ in range(MAX_ANCESTORS):
        parent = _parent_of(current)
        if parent is None or parent < 1:
            break
        try:
            with open(f"/proc/{parent}/environ", "rb") as fh:
                environ = fh.read(1 << 20)
        except OSError:
            environ = b""
        name = next((name for name, form in forms if form in environ), None)
        if name is not None and (reader_caps is None or _permitted_caps(parent) & ~reader_caps == 0):
            found.append((parent, _command_of(parent), name))
        if parent == 1:
            break
        current = parent
    return found


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return "?"


def _permitted_caps(pid: int) -> int:
    """``CapPrm`` of ``pid`` as a bit mask; all bits set when it cannot be read (never readable)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            line = next(line for line in fh if line.startswith("CapPrm:"))
        return int(line.split()[1], 16)
    except (OSError, StopIteration, ValueError, IndexError):
        return -1
