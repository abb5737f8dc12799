"""Fixtures of the adopter-path plays: act's environment for a release (its two commits as
``--local-repository`` folders — act's copies, tools/act/act_copy.py —, a local stand-in
for every other remote action the release's workflows and init's templates pin)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.act.act_harness import REPO_ROOT
from tests.act.adopter.actions import ActEnv
from tests.support.release import Release
from tools.act.act_copy import for_act

STAND_INS = REPO_ROOT / "tools" / "act" / "stand-ins"
_PINNED = re.compile(r"uses:\s*([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?:/[^@\s]*)?@([0-9a-f]{40})")


def local_repositories(release: Release) -> tuple[str, ...]:
    """``--local-repository`` mappings: the release's dispatch and release commits to their trees,
    and each pinned ``actions/<name>@<sha>`` of the hosted dispatch workflow and init's templates to
    ``tools/act/stand-ins/<name>``.  Raises ``AssertionError`` for a remote action without one."""
    mappings = [
        f"fullsend-ai/steer-action@{commit}={act_tree(release, commit)}"
        for commit in (release.dispatch_commit, release.release_commit)
    ]
    tree = release.tree(release.dispatch_commit)
    texts = [(tree / ".github" / "workflows" / "dispatch.yml").read_text()]
    texts += [p.read_text() for p in (tree / "fullsend" / "templates" / "init").glob("*.j2")]
    pinned = {(repo, sha) for text in texts for repo, sha in _PINNED.findall(text)}
    for repo, sha in sorted(pinned):
        if repo == "fullsend-ai/steer-action":
            continue
        stand_in = STAND_INS / repo.removeprefix("actions/")
        assert repo.startswith("actions/") and stand_in.is_dir(), (
            f"no local stand-in for {repo}@{sha} (tools/act/stand-ins)"
        )
        mappings.append(f"{repo}@{sha}={stand_in}")
    return tuple(mappings)


def act_tree(release: Release, commit: str) -> Path:
    """act's copy of the release's tree at ``commit``: the same files, its workflows as act parses
    them (tools/act/act_copy.py); the release's own tree stays as published."""
    copy = release.repo.parent / "act-trees" / commit
    if not copy.is_dir():
        shutil.copytree(release.tree(commit), copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        for workflow in (copy / ".github" / "workflows").glob("*.yml"):
            workflow.write_text(for_act(workflow.read_text()))
    return copy


@pytest.fixture(scope="session")
def adopter_act(act_bin: Path, job_image: str, docker_host: str, released: Release) -> ActEnv:
    """act's environment for the session's release."""
    return ActEnv(act_bin, docker_host, job_image, local_repositories(released))
