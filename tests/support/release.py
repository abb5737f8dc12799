"""A steer-action release made by the project's own tooling, once per session: what the release
test (tests/container/test_release_registry.py) checks and what the adopter-path plays
(tests/act/adopter/) pin.

``make_release`` copies this checkout's files (tracked, and untracked ones git does not ignore:
what ``tools/act/workdir.sh`` copies) into a scratch repository as one commit, then runs, there,
``tools/release/release.sh build --local --insecure`` against a real registry on 127.0.0.1
(tests/support/registry.py; both images, this machine's architecture) and ``publish --local``
(the release commit, and the commit on top that pins the hosted dispatch workflow to it), tags the
dispatch commit as ``publish`` does without ``--local`` (``vX.Y.Z`` and the moving ``vMAJOR``), and
pulls both images by digest into podman's store (``--tls-verify=false``: plain HTTP), so a
container engine that asks for ``<registry>/…@sha256:…`` finds exactly what was pushed.

The pushed registry is cached under ``$FULLSEND_CACHE_DIR/release/<hash>/``, the hash of what the
images are built from (``image_inputs_hash``): a later session whose images would be the same
serves it again instead of building and pushing (the commits are made anew, cheaply).  The build
holds a lock, so a session that starts while another builds (``.ci/run`` warms the cache in the
background with ``python -m tests.support.release``) waits and reuses it; entries unused for a day
go.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fullsend import __version__
from tests.support.registry import LocalRegistry

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = Path(os.environ.get("FULLSEND_CACHE_DIR", Path.home() / ".cache" / "fullsend"))
RELEASE_TIMEOUT_S = 3000
VERSION = f"v{__version__}"  # release.sh refuses any other version than the package's
IMAGE_PATH = "fullsend-ai/steer-action"
_DATES = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
_IDENTITY = ["-c", "user.name=steer-action snapshot", "-c", "user.email=snapshot@invalid"]
PRUNE_AFTER_S = 24 * 3600


@dataclass(frozen=True)
class Release:
    """One release: its version, images (``image`` = ``<registry>/fullsend-ai/steer-action``) and
    the scratch repository holding the snapshot, the release commit, the dispatch commit and the
    tags."""

    version: str
    image: str
    slim_digest: str
    full_digest: str
    repo: Path
    snapshot: str
    release_commit: str
    dispatch_commit: str
    build_s: float

    @property
    def slim(self) -> str:
        return f"{self.image}@{self.slim_digest}"

    @property
    def full(self) -> str:
        return f"{self.image}@{self.full_digest}"

    def git(self, *args: str) -> str:
        """``git <args>`` in the scratch repository; its stdout."""
        return _git(self.repo, *args)

    def tree(self, commit: str) -> Path:
        """A work tree of the scratch repository at ``commit`` (made once)."""
        folder = self.repo.parent / "trees" / commit
        if not folder.is_dir():
            self.git("worktree", "add", "--quiet", "--detach", str(folder), commit)
        return folder


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {repo}:\n{proc.stderr[-3000:]}")
    return proc.stdout.strip()


def snapshot(dest: Path) -> str:
    """This checkout's files as the one commit of a new repository at ``dest``; returns its SHA."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout.split(b"\0")
    dest.mkdir(parents=True)
    archive = dest.parent / "snapshot.tar"
    with tarfile.open(archive, "w") as tar:
        for name in sorted(n.decode() for n in listed if n):
            if (REPO_ROOT / name).exists() or (REPO_ROOT / name).is_symlink():
                tar.add(REPO_ROOT / name, arcname=name, recursive=False)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="tar")
    archive.unlink()
    _git(dest, "init", "--quiet", "--initial-branch=main")
    _git(dest, "add", "--all")
    _git(dest, *_IDENTITY, "commit", "--quiet", "--no-verify", "-m", "steer-action snapshot", env=_DATES)
    return _git(dest, "rev-parse", "HEAD")


def image_inputs_hash(repo: Path) -> str:
    """What the released images depend on, hashed (as tools/container/build-image.sh hashes its
    context): the build context the Dockerfile copies, the release tooling, the base image."""
    import hashlib

    digest = hashlib.sha256()
    roots = [
        "Dockerfile",
        ".dockerignore",
        "requirements.txt",
        "entrypoint.py",
        "fullsend",
        "tools/release",
        "tools/container/build-ca.sh",
    ]
    for root in roots:
        paths = sorted((repo / root).rglob("*")) if (repo / root).is_dir() else [repo / root]
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(repo)}\0".encode() + path.read_bytes() + b"\0")
    base = _podman("image", "inspect", "--format", "{{.Id}}", "debian:bookworm-slim").stdout.strip()
    digest.update(base.encode())
    return digest.hexdigest()[:16]


def _release_sh(repo: Path, *args: str) -> dict[str, str]:
    proc = subprocess.run(
        [str(repo / "tools" / "release" / "release.sh"), *args, "--local"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=RELEASE_TIMEOUT_S,
    )
    if proc.returncode != 0:
        raise AssertionError(f"release.sh {args[0]} failed:\n{proc.stderr[-4000:]}")
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


def _podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=900)


def built_registry(repo: Path, scratch: Path) -> tuple[Path, dict[str, str]]:
    """The cached registry folder holding ``repo``'s released images and their digests, made by
    ``release.sh build`` the first time (under a lock, so a second session waits for the first
    instead of building the same images again)."""
    root = CACHE_DIR / "release"
    root.mkdir(parents=True, exist_ok=True)
    cache = root / image_inputs_hash(repo)
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cache / "digests.json").exists():
            with LocalRegistry(scratch / "registry") as registry:
                image = f"{registry.host}/{IMAGE_PATH}"
                built = _release_sh(repo, "build", "--image", image, "--version", VERSION, "--insecure")
            for tag in (VERSION, f"{VERSION}-full"):  # nothing local under the pushed names
                _podman("manifest", "rm", f"localhost/steer-action-release:{tag}")
                _podman("rmi", "--force", f"{image}:{tag}")
            digests = {"slim_digest": built["slim_digest"], "full_digest": built["full_digest"]}
            shutil.move(str(scratch / "registry"), str(cache))
            (cache / "digests.json").write_text(json.dumps(digests))
        os.utime(cache)  # in use: the pruning below keeps it
        _prune(root, keep=cache)
    return cache, json.loads((cache / "digests.json").read_text())


def _prune(root: Path, keep: Path) -> None:
    """Drop cached registries unused for a day (other worktrees' sessions share the cache)."""
    import time

    for entry in root.iterdir():
        if entry.is_dir() and entry != keep and time.time() - entry.stat().st_mtime > PRUNE_AFTER_S:
            shutil.rmtree(entry, ignore_errors=True)


@contextmanager
def make_release(scratch: Path) -> Iterator[tuple[Release, LocalRegistry]]:
    """The session's release (module docstring); the registry serves while the block runs, and the
    references pulled by digest are dropped from podman's store after it (their layers stay)."""
    import time

    started = time.monotonic()
    repo = scratch / "steer-action"
    commit = snapshot(repo)
    cache, digests = built_registry(repo, scratch)
    with LocalRegistry(cache) as registry:
        image = f"{registry.host}/{IMAGE_PATH}"
        made = _release_sh(repo, "publish", "--image", image, "--version", VERSION, *_digest_args(digests))
        dispatch = made.get("dispatch_commit", made["release_commit"])
        _git(repo, *_IDENTITY, "tag", "--annotate", VERSION, dispatch, "-m", f"steer-action {VERSION}")
        _git(repo, "tag", "--force", VERSION.split(".")[0], dispatch)
        release = Release(
            VERSION,
            image,
            digests["slim_digest"],
            digests["full_digest"],
            repo,
            commit,
            made["release_commit"],
            dispatch,
            time.monotonic() - started,
        )
        for reference in (release.slim, release.full):
            pulled = _podman("pull", "--quiet", "--tls-verify=false", reference)
            if pulled.returncode != 0:
                raise AssertionError(f"podman pull {reference} failed:\n{pulled.stderr[-2000:]}")
        try:
            yield release, registry
        finally:
            _podman("rmi", release.slim, release.full)


def _digest_args(digests: dict[str, str]) -> list[str]:
    return ["--slim-digest", digests["slim_digest"], "--full-digest", digests["full_digest"]]


def main() -> int:
    """``python -m tests.support.release``: build and cache this checkout's release images now
    (.ci/run does it in the background, beside the default tier, so the full tier finds them)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fullsend-release-") as tmp:
        repo = Path(tmp) / "steer-action"
        snapshot(repo)
        cache, digests = built_registry(repo, Path(tmp))
    print(f"release: images cached in {cache}: {digests['slim_digest']} {digests['full_digest']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
