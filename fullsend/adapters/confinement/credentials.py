"""The checkout's persisted credential, removed before the agent can reach it (docs/rules.md#credential-removed).

``remove_credentials`` runs before the first child of the run (the agent CLI's ``--version``
check included): in every git directory under the workspace it cuts from each ``config`` the
``key = value`` lines that hold a secret (actions/checkout v4's ``extraheader``), and it deletes
every file such a config includes that holds one (checkout v6's ``git-credentials-*.config``
under ``RUNNER_TEMP``).  Nothing is kept and nothing is put back: the agent writes in this
repository for the whole run, and git runs code from what lies there (hooks, ``core.fsmonitor``,
``commondir``, gitlinks, included files, ``HOME``'s config …), so a credential restored after the
run would be handed to whatever the agent planted.  A later step that needs authenticated git
checks out again or passes a token itself.  ``remove_token_files`` does the same for the
credential files cloud-auth actions leave (google-github-actions/auth's ``gha-creds-*.json``
carries the runner's OIDC request token, which mints tokens: a receipt's proof among them).
Every read and write goes through directories opened with ``O_NOFOLLOW`` from ``/``
(docs/architecture.md "Sandboxes": root never writes through a child's path).  Never raises.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from fullsend.core.tokens.credential import cut_secret_lines
from fullsend.core.tokens.reach import secret_forms

_INCLUDE = re.compile(rb"^\s*path\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
#: Folders of a git directory's own root (the top one, and each ``modules/<name>``) that hold no config.
_NOT_WALKED = frozenset({"objects", "lfs", "logs", "refs"})
_CONFIG_NAMES = frozenset({"config", "config.worktree"})
#: Bounds: folders visited looking for git directories, and the largest config or included file read.
MAX_DIRS = 100_000
MAX_FILE_BYTES = 1024 * 1024


def remove_credentials(workspace: Path, roots: Sequence[Path], secrets: Mapping[str, str]) -> list[str]:
    """Remove every secret (name -> value) from the git configs under ``workspace`` and delete the
    files they include that lie under ``roots`` (the workspace, ``HOME``, ``RUNNER_TEMP``) and hold one.

    Returns the paths changed, as text, in the order found (empty when nothing held a secret).
    What cannot be removed (a secret outside a ``key = value`` line, an included file outside
    ``roots``, an unwritable file) is left where it is, for the reach scan to find.
    """
    forms = [form for value in secrets.values() for form in secret_forms(value)]
    if not forms:
        return []
    real_roots = [_real(root) for root in roots if root]
    changed: list[str] = []
    for git_dir in _git_dirs(_real(workspace)):
        for config in _configs_in(git_dir):
            data = _read(config)
            if data is None:
                continue
            changed += [str(path) for path in _included_secrets(config, data, forms, real_roots) if _unlink(path)]
            cut = cut_secret_lines(data, forms)
            if cut.cut and _replace(config, cut.left):
                changed.append(str(config))
    return list(dict.fromkeys(changed))


#: The credential files cloud-auth actions write where later steps find them
#: (google-github-actions/auth's ``gha-creds-<random>.json``: the OIDC request URL and token).
CLOUD_CREDENTIAL_FILES = ("gha-creds-*.json",)


def remove_token_files(roots: Sequence[Path], secrets: Mapping[str, str]) -> list[str]:
    """Delete every cloud credential file (:data:`CLOUD_CREDENTIAL_FILES`) under ``roots`` (the
    workspace, ``HOME``, ``RUNNER_TEMP``; links not followed, at most ``MAX_DIRS`` folders each)
    that holds one of ``secrets`` (name -> value) in a spelling of ``secret_forms``.  Returns the
    paths deleted, as text; one that cannot be deleted is left for the reach scan to find."""
    forms = [form for value in secrets.values() for form in secret_forms(value)]
    removed: list[str] = []
    for root in dict.fromkeys(_real(root) for root in roots if root):
        for path in _named_files(root, CLOUD_CREDENTIAL_FILES):
            body = _read(path)
            if forms and body is not None and any(form in body for form in forms) and _unlink(path):
                removed.append(str(path))
    return list(dict.fromkeys(removed))


def _named_files(root: Path, patterns: Sequence[str]) -> Iterator[Path]:
    for visited, (dirpath, dirs, files) in enumerate(os.walk(root, followlinks=False), start=1):
        if visited > MAX_DIRS:
            return
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in sorted(files):
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
                yield Path(dirpath) / name


def _included_secrets(config: Path, data: bytes, forms: Sequence[bytes], roots: Sequence[Path]) -> Iterator[Path]:
    for raw in _INCLUDE.findall(data):
        included = _include_path(config, raw)
        if included is None or not any(included.is_relative_to(root) for root in roots):
            continue
        body = _read(included)
        if body is not None and any(form in body for form in forms):
            yield included


def _include_path(config: Path, raw: bytes) -> Path | None:
    value = raw.strip(b'"').decode("utf-8", errors="replace")
    if not value or value.startswith("~") or "\0" in value:
        return None
    path = Path(os.path.normpath(Path(value) if os.path.isabs(value) else config.parent / value))
    return _real(path.parent) / path.name  # no child has run yet: the links on the way are the job's own


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
    """Every config file of ``git_dir`` and of the git directories it holds (``modules/<name>``):
    git's own folders are skipped only at such a root, so a submodule named ``logs`` is searched."""
    for dirpath, dirs, files in os.walk(git_dir, followlinks=False):
        if "HEAD" in files or Path(dirpath) == git_dir:  # a git directory's own root
            dirs[:] = [d for d in dirs if d not in _NOT_WALKED]
        for name in sorted(files):
            if name in _CONFIG_NAMES:
                yield Path(dirpath) / name


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _read(path: Path) -> bytes | None:
    """The bytes of the regular file at ``path`` (not a link, at most ``MAX_FILE_BYTES``), or ``None``."""
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
        return handle.read(MAX_FILE_BYTES + 1)


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


def _replace(path: Path, data: bytes) -> bool:
    """Write ``data`` in place of the file at ``path`` atomically, keeping its mode and owner;
    False when it could not be done."""
    temp = f".{path.name}.fullsend-{os.getpid()}"
    try:
        dir_fd = _open_dir(path.parent)
    except OSError:
        return False
    try:
        st = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchown(handle.fileno(), st.st_uid, st.st_gid)
            os.fchmod(handle.fileno(), stat.S_IMODE(st.st_mode))
        os.replace(temp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return True
    except OSError:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except OSError:
            pass
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
