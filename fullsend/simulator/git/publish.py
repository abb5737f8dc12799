"""A folder served as the simulator's repository over its git server (``fullsend simulator serve
--repository DIR``, README "Run it locally with act").

The folder's files become one commit of ``<owner>/<repo>`` (private, as the scenario's repository
is), and the refs a checkout of the example workflows asks for point at it: the default branch,
each pull request's head branch and ``refs/pull/<n>/head``.  A scenario's head "sha" is a name
(``aaa111``), not a commit — a scenario cannot know the commit a folder makes — so a head that is
not a full sha also names a branch at the commit: a checkout by the event's
``pull_request.head.sha``, which fetches a name that is not a full sha as a branch (as
``actions/checkout`` does), finds the served files.  The folder itself is only read: git
writes its objects straight into the bare repository, through an index of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from fullsend.simulator.git.server import GitServer

#: The identity of the one commit (the simulator's, not a person's).
_AUTHOR = {
    "GIT_AUTHOR_NAME": "GitHub simulator",
    "GIT_AUTHOR_EMAIL": "simulator@github.localhost",
    "GIT_COMMITTER_NAME": "GitHub simulator",
    "GIT_COMMITTER_EMAIL": "simulator@github.localhost",
}


def publish_folder(git: GitServer, owner: str, repo: str, folder: Path, refs: Iterable[str]) -> str:
    """Make the bare repository ``owner/repo`` on ``git``, commit every file under ``folder``
    (``.git`` left out) as its one commit and point each of ``refs`` (full names, e.g.
    ``refs/heads/main``, ``refs/pull/7/head``) at it.  Returns the commit's sha (40 hex).

    Raises ``RuntimeError`` when git fails (the message names the command and git's words)."""
    bare = git.create(owner, repo)
    with tempfile.TemporaryDirectory(prefix="fullsend-publish-") as scratch:
        env = {
            **os.environ,
            **_AUTHOR,
            "GIT_DIR": str(bare),
            "GIT_WORK_TREE": str(folder),
            "GIT_INDEX_FILE": str(Path(scratch) / "index"),
        }
        _run(env, "add", "--all", "--force", "--", ".", ":(exclude).git")
        tree = _run(env, "write-tree").strip()
        commit = _run(env, "commit-tree", tree, "-m", f"{folder.name}, served by the GitHub simulator").strip()
        for ref in refs:
            _run(env, "update-ref", ref, commit)
    return commit


def pull_request_refs(heads: Iterable[tuple[int, str, str]], default_branch: str) -> list[str]:
    """The refs a checkout asks for: ``refs/heads/<default_branch>``, and per pull request
    ``(number, head branch, head sha)`` its branch, ``refs/pull/<number>/head`` and, for a head
    sha that is only a name (module docstring), a branch of that name; each once."""
    refs = [f"refs/heads/{default_branch}"]
    for number, branch, head in heads:
        refs += [f"refs/heads/{branch}", f"refs/pull/{number}/head"]
        if re.fullmatch(r"[\w.-]+", head) and not re.fullmatch(r"[0-9a-f]{40}", head):
            refs.append(f"refs/heads/{head}")
    return list(dict.fromkeys(refs))


def _run(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["git", *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout
