"""Issue 42, honest releases: ``fullsend init`` pins the hosted dispatch only at a commit a release
tag of steer-action names, read from the tags with ``git ls-remote`` (here a real bare repository on
disk, as ``tools/release/release.sh`` tags it); before a release it writes the self-contained
dispatch and says why; when it cannot read the tags it says so; GHES gets the self-contained one
(docs/adopting.md "Which commit init pins")."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fullsend.app.commands.init import InitPlan, run_init, run_upgrade
from fullsend.app.commands.init_release import check_release, is_ghes, release_tags
from tests.support.releases import NO_SERVER, init_env, release_server

SHIM = Path(".github/workflows/fullsend.yml")
SELF = Path(".github/workflows/fullsend-dispatch.yml")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """Releases v0.1.0 and v0.2.0 (annotated tags), then a commit of main that is none."""
    return release_server(tmp_path_factory.mktemp("releases"), ("v0.1.0", "v0.2.0"))


def _init(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "fullsend", "init", "--stages", "review,fix", *args]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=60)


def test_a_release_commit_gets_the_hosted_dispatch_with_its_tag(tmp_path: Path, server) -> None:
    url, commits = server
    made = _init(tmp_path, init_env(url), "--ref", commits[1])
    assert made.returncode == 0, made.stderr
    assert f"Pinned steer-action {commits[1]}: the release v0.2.0 ({url}/fullsend-ai/steer-action tags it)." in (
        made.stdout
    )
    uses = yaml.safe_load((tmp_path / SHIM).read_text())["jobs"]["dispatch"]["uses"]
    assert uses == f"fullsend-ai/steer-action/.github/workflows/dispatch.yml@{commits[1]}"
    assert f"dispatch.yml@{commits[1]} # v0.2.0\n" in (tmp_path / SHIM).read_text()
    assert not (tmp_path / SELF).exists()


def test_a_commit_of_main_gets_the_self_contained_dispatch_and_the_reason(tmp_path: Path, server) -> None:
    url, commits = server
    made = _init(tmp_path, init_env(url), "--ref", commits[2])
    assert made.returncode == 0, made.stderr
    assert f"{commits[2]} is no steer-action release: no vX.Y.Z tag of {url}/fullsend-ai/steer-action names it" in (
        made.stdout
    )
    assert f"newest release: v0.2.0 ({commits[1]})" in made.stdout
    assert "Wrote the self-contained dispatch" in made.stdout and "--dispatch hosted" in made.stdout
    dispatch = (tmp_path / SELF).read_text()
    assert f"uses: fullsend-ai/steer-action@{commits[2]} # unreleased commit (written by fullsend " in dispatch
    assert yaml.safe_load((tmp_path / SHIM).read_text())["jobs"]["dispatch"]["uses"] == (
        "./.github/workflows/fullsend-dispatch.yml"
    )


def test_hosted_asked_for_at_a_commit_that_is_no_release_is_refused(tmp_path: Path, server) -> None:
    url, commits = server
    made = _init(tmp_path, init_env(url), "--ref", commits[2], "--dispatch", "hosted")
    assert made.returncode == 2 and made.stderr.count("\n") == 1, made.stderr
    assert f"--dispatch hosted needs a steer-action release commit, and {commits[2]} is none" in made.stderr
    assert list(tmp_path.iterdir()) == []


def test_unreachable_tags_are_said_and_the_default_is_what_works_anywhere(tmp_path: Path) -> None:
    ref = "0123456789abcdef0123456789abcdef01234567"
    made = _init(tmp_path, init_env(NO_SERVER), "--ref", ref)
    assert made.returncode == 0, made.stderr
    assert f"Could not check whether {ref} is a steer-action release ({NO_SERVER}/fullsend-ai/steer-action: " in (
        made.stdout
    )
    assert (tmp_path / SELF).exists()
    hosted = tmp_path / "hosted"
    hosted.mkdir()
    asked = _init(hosted, init_env(NO_SERVER), "--ref", ref, "--dispatch", "hosted")
    assert asked.returncode == 0 and "Could not check" in asked.stdout, asked.stderr  # taken on trust, and said


@pytest.mark.parametrize(
    ("env", "ghes"),
    [
        ({}, False),
        ({"GITHUB_SERVER_URL": "https://github.com"}, False),
        ({"GITHUB_SERVER_URL": "https://ghes.example.com"}, True),
        ({"GITHUB_API_URL": "https://ghes.example.com/api/v3"}, True),
        ({"GITHUB_SERVER_URL": "http://127.0.0.1:9000", "GITHUB_API_URL": "http://127.0.0.1:8765"}, False),
    ],
)
def test_ghes_is_recognised_by_the_api_path(env: dict[str, str], ghes: bool) -> None:
    assert is_ghes(env) is ghes


def test_on_ghes_a_release_still_gets_the_self_contained_dispatch(tmp_path: Path, server) -> None:
    url, commits = server
    out, err = io.StringIO(), io.StringIO()
    env = {"GITHUB_SERVER_URL": url, "GITHUB_API_URL": "https://ghes.example.com/api/v3"}
    assert run_init(InitPlan(("review",), ref=commits[0], dispatch=""), tmp_path, False, out, err, env) == 0
    assert "cannot call a reusable workflow hosted on github.com" in out.getvalue()
    assert f"uses: fullsend-ai/steer-action@{commits[0]} # v0.1.0\n" in (tmp_path / SELF).read_text()


def test_lightweight_and_annotated_tags_and_no_others_count(tmp_path: Path) -> None:
    url, commits = release_server(tmp_path, ("v1.0.0",), annotated=False)
    check = check_release(commits[0], {"GITHUB_SERVER_URL": url})
    assert (check.tag, check.checked, check.tags) == ("v1.0.0", True, (("v1.0.0", commits[0]),))
    text = (
        f"{'a' * 40}\trefs/tags/v2.0.0\n{'b' * 40}\trefs/tags/v2.0.0^{{}}\n"
        f"{'c' * 40}\trefs/tags/v2\n{'d' * 40}\trefs/tags/latest\n{'e' * 40}\trefs/tags/v2.0.0-rc1\n"
    )
    assert release_tags(text) == {"v2.0.0": "b" * 40}


def test_upgrade_to_a_commit_that_is_no_release_keeps_a_hosted_setup_from_breaking(tmp_path: Path, server) -> None:
    url, commits = server
    assert _init(tmp_path, init_env(url), "--ref", commits[0]).returncode == 0
    out, err = io.StringIO(), io.StringIO()
    plan = InitPlan(("review", "fix"), ref=commits[2], dispatch="hosted")
    assert run_upgrade(plan, tmp_path, True, False, out, err, {"GITHUB_SERVER_URL": url}) == 2
    assert "--dispatch hosted needs a steer-action release commit" in err.getvalue()
    assert f"@{commits[0]} # v0.1.0" in (tmp_path / SHIM).read_text()
