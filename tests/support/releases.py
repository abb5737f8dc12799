"""Steer-action's release tags as ``fullsend init`` reads them, without the network: a bare
repository ``<server>/fullsend-ai/steer-action`` on disk (a ``file://`` server URL), tagged as
``tools/release/release.sh`` tags a release, and the environment that points init at it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: A server URL no git can reach: init says it could not check, at once.
NO_SERVER = "file:///nonexistent-steer-action-server"


def init_env(server: str = NO_SERVER, **extra: str) -> dict[str, str]:
    """This process's environment for a ``fullsend init`` child: ``GITHUB_SERVER_URL`` = ``server``,
    no ``GITHUB_API_URL`` (github.com), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_API_URL", "GITHUB_SERVER_URL")}
    return {**env, "GITHUB_SERVER_URL": server, **extra}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout.strip()


def release_server(root: Path, tags: tuple[str, ...] = ("v0.1.0",), annotated: bool = True) -> tuple[str, list[str]]:
    """``(server URL, commits)``: a repository with one commit per tag in ``tags`` (and one more,
    untagged, last: a commit of main that is no release), each tag on its own commit (annotated,
    as release.sh makes them, or lightweight), and the moving major tag on the last release."""
    work = root / "work"
    work.mkdir(parents=True)
    _git(root, "init", "-q", str(work))
    commits = []
    for index, tag in enumerate([*tags, ""]):
        (work / "n").write_text(str(index))
        _git(work, "add", "n")
        _git(work, "commit", "-q", "-m", f"commit {index}")
        commits.append(_git(work, "rev-parse", "HEAD"))
        if tag:
            _git(work, "tag", *(["-a", "-m", tag] if annotated else []), tag)
    if tags:
        _git(work, "tag", tags[-1].split(".")[0], commits[len(tags) - 1])
    bare = root / "server" / "fullsend-ai" / "steer-action"
    bare.parent.mkdir(parents=True)
    _git(root, "clone", "-q", "--bare", str(work), str(bare))
    return f"file://{root / 'server'}", commits
