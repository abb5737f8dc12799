"""Issue 20: the release commit (``tools/release/release.sh publish --local``) and what a checkout runs.

A checkout's ``action.yml`` builds the ``Dockerfile`` (``uses: ./``: tests, act, contributors);
the release commit — made on top of HEAD in a scratch repository holding this checkout's
``action.yml`` and release script — runs the published images by digest, with the same inputs
and outputs in ``action.yml`` and ``full/action.yml``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGE = "ghcr.io/fullsend-ai/steer-action"
SLIM = "sha256:" + "1" * 64
FULL = "sha256:" + "2" * 64
VERSION = "1.4.0"  # the scratch package's __version__


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A repository with this checkout's action.yml and release tooling, one commit."""
    repo = tmp_path / "repo"
    for rel in ("action.yml", "tools/release/release.sh", "tools/container/build-ca.sh"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / rel, repo / rel)
    (repo / "fullsend").mkdir()
    (repo / "fullsend" / "__init__.py").write_text(f'"""The package."""\n\n__version__ = "{VERSION}"\n')
    _git(repo.parent, "init", "-q", str(repo))
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-q", "-m", "main")
    return repo


def _publish(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [str(repo / "tools/release/release.sh"), "publish", "--local", "--image", IMAGE, *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_a_checkout_builds_the_dockerfile():
    assert yaml.safe_load((REPO_ROOT / "action.yml").read_text())["runs"] == {"using": "docker", "image": "Dockerfile"}


def test_the_release_commit_runs_both_images_by_digest_and_changes_nothing_else(scratch):
    head = _git(scratch, "rev-parse", "HEAD")
    proc = _publish(scratch, "--version", "v1.4.0", "--slim-digest", SLIM, "--full-digest", FULL)
    assert proc.returncode == 0, proc.stderr
    commit = proc.stdout.strip().removeprefix("release_commit=")
    assert _git(scratch, "rev-parse", f"{commit}^") == head
    assert _git(scratch, "diff", "--name-status", head, commit).splitlines() == ["M\taction.yml", "A\tfull/action.yml"]
    main = yaml.safe_load((scratch / "action.yml").read_text())
    slim = yaml.safe_load(_git(scratch, "show", f"{commit}:action.yml"))
    full = yaml.safe_load(_git(scratch, "show", f"{commit}:full/action.yml"))
    assert slim["runs"] == {"using": "docker", "image": f"docker://{IMAGE}@{SLIM}"}
    assert full["runs"] == {"using": "docker", "image": f"docker://{IMAGE}@{FULL}"}
    assert full["name"] == main["name"] + " (full image)" and slim["name"] == main["name"]
    for released in (slim, full):
        assert released["inputs"] == main["inputs"] and released["outputs"] == main["outputs"]
    # The work tree, the index, HEAD and the tags are untouched; --local pushes and tags nothing.
    assert _git(scratch, "status", "--porcelain") == "" and _git(scratch, "rev-parse", "HEAD") == head
    assert _git(scratch, "tag") == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["--version", "1.4.0", "--slim-digest", SLIM, "--full-digest", FULL], "--version must be vMAJOR.MINOR.PATCH"),
        (["--version", "v1.4.0", "--slim-digest", "sha256:abc", "--full-digest", FULL], "must be sha256:<64 hex>"),
        (["--version", "v1.4.0", "--slim-digest", SLIM], "must be sha256:<64 hex>"),
        (
            ["--version", "v1.5.0", "--slim-digest", SLIM, "--full-digest", FULL],
            "--version v1.5.0 is not the package's version '1.4.0'",
        ),
    ],
)
def test_a_malformed_version_or_digest_is_refused(scratch, args, message):
    proc = _publish(scratch, *args)
    assert proc.returncode == 2 and message in proc.stderr


def test_the_hosted_dispatch_is_pinned_to_the_release_commit_in_a_commit_on_top(scratch):
    """docs/adopting.md "The dispatch workflow": a caller pins the dispatch commit; its workflow runs
    the action of the release commit below it (a commit cannot name its own SHA)."""
    rel = ".github/workflows/dispatch.yml"
    (scratch / rel).parent.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / rel, scratch / rel)
    _git(scratch, "add", ".")
    _git(scratch, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-q", "-m", "dispatch")
    head = _git(scratch, "rev-parse", "HEAD")
    proc = _publish(scratch, "--version", "v1.4.0", "--slim-digest", SLIM, "--full-digest", FULL)
    assert proc.returncode == 0, proc.stderr
    outputs = dict(line.split("=", 1) for line in proc.stdout.split())
    release, dispatch = outputs["release_commit"], outputs["dispatch_commit"]
    assert _git(scratch, "rev-parse", f"{dispatch}^") == release and _git(scratch, "rev-parse", f"{release}^") == head
    assert _git(scratch, "diff", "--name-status", release, dispatch).splitlines() == [f"M\t{rel}"]
    before = (REPO_ROOT / rel).read_text()
    after = _git(scratch, "show", f"{dispatch}:{rel}") + "\n"
    pinned = f"uses: fullsend-ai/steer-action@{release} # v1.4.0"
    assert after == before.replace("uses: ./  # zizmor: ignore[self-repository]", pinned)
    assert after.count(pinned) == before.count("uses: ./  # zizmor: ignore[self-repository]") == 7
    assert not [line for line in after.splitlines() if line.strip().removeprefix("- ").startswith("uses: ./")]
    assert yaml.safe_load(after)["jobs"].keys() == yaml.safe_load(before)["jobs"].keys()
    assert _git(scratch, "tag") == "" and _git(scratch, "rev-parse", "HEAD") == head
