"""``fullsend init --upgrade``: a setup an older init wrote, shown as a diff against what this
release writes, applied on ``--apply``; a file the adopter changed is named and kept unless
``--force`` (docs/adopting.md "Upgrades")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from fullsend.app.commands.init import InitPlan, render_files
from fullsend.app.commands.init_upgrade import MANIFEST, digest
from fullsend.core.route.triggers import shim_triggers
from tests.support.releases import init_env

OLD_REF = "0123456789abcdef0123456789abcdef01234567"
NEW_REF = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"
DISPATCH = Path(".github/workflows/fullsend-dispatch.yml")
PROMPT = Path(".fullsend/prompts/review.md")


def _fullsend(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fullsend", *args],
        cwd=cwd,
        env=init_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _older_setup(root: Path, stages: str = "review") -> str:
    """What an older init wrote: this release's files at OLD_REF, the dispatch workflow's Route step
    as an older template had it, and the manifest recording exactly those files."""
    made = _fullsend(
        "init", "--stages", stages, "--ref", OLD_REF, "--runtime", "codex", "--dispatch", "self-contained", cwd=root
    )
    assert made.returncode == 0, made.stderr
    old = (
        (root / DISPATCH)
        .read_text()
        .replace(
            "        with:\n          command: route\n",
            "        with:\n          command: route\n          legacy: true\n",
            1,
        )
    )
    (root / DISPATCH).write_text(old)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"][str(DISPATCH)] = digest(old)
    manifest["version"] = "0.0.9"
    (root / MANIFEST).write_text(json.dumps(manifest))
    return old


def test_upgrade_shows_the_difference_and_writes_nothing_without_apply(tmp_path: Path) -> None:
    old = _older_setup(tmp_path)
    shown = _fullsend("init", "--upgrade", "--ref", NEW_REF, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"--- a/{DISPATCH}\n+++ b/{DISPATCH}\n" in shown.stdout
    assert "-          legacy: true\n" in shown.stdout
    assert f"-        uses: fullsend-ai/steer-action@{OLD_REF} # unreleased" in shown.stdout
    assert f"+        uses: fullsend-ai/steer-action@{NEW_REF} # unreleased" in shown.stdout
    assert (
        f"update  {DISPATCH}" in shown.stdout and "Nothing written; --apply writes the 1 add and update" in shown.stdout
    )
    assert (tmp_path / DISPATCH).read_text() == old


def test_upgrade_apply_writes_what_this_release_writes_with_the_recorded_plan(tmp_path: Path) -> None:
    _older_setup(tmp_path)
    applied = _fullsend("init", "--upgrade", "--apply", "--ref", NEW_REF, cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert "Wrote 1 file(s)" in applied.stdout
    # the recorded stages, runtime and dispatch
    fresh = dict(render_files(InitPlan(("review",), runtime="codex", ref=NEW_REF, dispatch="self-contained")))
    for rel, text in fresh.items():
        assert (tmp_path / rel).read_text() == text, rel
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert (
        manifest["ref"] == NEW_REF
        and manifest["runtime"] == "codex"
        and manifest["files"][str(DISPATCH)] == digest(fresh[DISPATCH])
    )
    again = _fullsend("init", "--upgrade", "--ref", NEW_REF, cwd=tmp_path)
    assert again.returncode == 0 and "\nUp to date" in again.stdout


def test_a_file_the_adopter_changed_is_named_and_kept_unless_forced(tmp_path: Path) -> None:
    _older_setup(tmp_path)
    mine = (tmp_path / PROMPT).read_text() + "Also check the migrations.\n"
    (tmp_path / PROMPT).write_text(mine)
    applied = _fullsend("init", "--upgrade", "--apply", "--ref", NEW_REF, cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert f" yours  {PROMPT}  (changed since fullsend init wrote it" in applied.stdout
    assert "-Also check the migrations.\n" in applied.stdout and "kept 1 of yours" in applied.stdout
    assert (tmp_path / PROMPT).read_text() == mine
    assert f"uses: fullsend-ai/steer-action@{NEW_REF}" in (tmp_path / DISPATCH).read_text()
    later = _fullsend("init", "--upgrade", "--ref", NEW_REF, cwd=tmp_path)  # still yours on the next upgrade
    assert f" yours  {PROMPT}" in later.stdout
    forced = _fullsend("init", "--upgrade", "--apply", "--force", "--ref", NEW_REF, cwd=tmp_path)
    assert forced.returncode == 0 and (tmp_path / PROMPT).read_text() != mine


def test_a_setup_from_before_the_manifest_is_never_overwritten_without_force(tmp_path: Path) -> None:
    old = _older_setup(tmp_path)
    (tmp_path / MANIFEST).unlink()
    applied = _fullsend(
        "init", "--upgrade", "--apply", "--stages", "review,fix", "--runtime", "codex", "--ref", NEW_REF, cwd=tmp_path
    )
    assert applied.returncode == 0, applied.stderr
    assert f" yours  {DISPATCH}" in applied.stdout and "   add  .fullsend/harness/fix.yaml" in applied.stdout
    assert (tmp_path / DISPATCH).read_text() == old
    assert (tmp_path / ".fullsend/harness/fix.yaml").is_file()
    assert str(DISPATCH) not in json.loads((tmp_path / MANIFEST).read_text())["files"]  # still not known as ours


def test_upgrade_flags_out_of_place_are_refused(tmp_path: Path) -> None:
    for args in (["--apply"], ["--upgrade", "--force"]):
        proc = _fullsend("init", *args, "--ref", NEW_REF, cwd=tmp_path)
        assert proc.returncode == 2 and "--apply goes with --upgrade" in proc.stderr
    missing = _fullsend("init", "--upgrade", "--ref", NEW_REF, "--dir", str(tmp_path / "nope"), cwd=tmp_path)
    assert missing.returncode == 2 and "is not an existing folder" in missing.stderr


def test_force_never_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside.md"
    repo.mkdir()
    _older_setup(repo)
    outside.write_text("not the repository's\n")
    (repo / PROMPT).unlink()
    (repo / PROMPT).symlink_to(outside)
    forced = _fullsend("init", "--upgrade", "--apply", "--force", "--ref", NEW_REF, cwd=repo)
    assert forced.returncode == 2 and f"{PROMPT} is a symbolic link" in forced.stderr
    assert outside.read_text() == "not the repository's\n"
    assert f"@{OLD_REF}" in (repo / DISPATCH).read_text()  # nothing written


def test_a_manifest_from_before_the_hosted_dispatch_stays_self_contained(tmp_path: Path) -> None:
    _older_setup(tmp_path)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    del manifest["dispatch"]
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    shown = _fullsend("init", "--upgrade", "--ref", NEW_REF, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"update  {DISPATCH}" in shown.stdout and "fullsend/.github/workflows/dispatch.yml@" not in shown.stdout


def test_upgrade_to_the_hosted_dispatch_rewrites_the_shim_and_leaves_the_old_dispatch(tmp_path: Path) -> None:
    old = _older_setup(tmp_path)
    applied = _fullsend("init", "--upgrade", "--apply", "--dispatch", "hosted", "--ref", NEW_REF, cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    shim = (tmp_path / ".github/workflows/fullsend.yml").read_text()
    assert f"    uses: fullsend-ai/steer-action/.github/workflows/dispatch.yml@{NEW_REF} # unreleased" in shim
    assert "      stages: review  #" in shim and "      runtime: codex\n" in shim
    assert (tmp_path / DISPATCH).read_text() == old  # not init's to delete: docs/adopting.md says so
    assert json.loads((tmp_path / MANIFEST).read_text())["dispatch"] == "hosted"


def test_upgrade_without_a_setup_is_one_line_exit_2_not_a_list_of_adds(tmp_path: Path) -> None:
    """Issue 42: run from the wrong folder, --upgrade must not list every file as `add` and exit 0."""
    proc = _fullsend("init", "--upgrade", "--ref", NEW_REF, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    assert proc.stderr.count("\n") == 1 and "no setup under" in proc.stderr
    assert "neither .fullsend/init.json nor .github/workflows/fullsend.yml" in proc.stderr
    assert list(tmp_path.iterdir()) == []


#: The shim's ``on:`` as every init before the per-stage events wrote it, whatever the stages.
EVERY_EVENT_ON = """on:
  issues:
    types: [opened, edited, labeled]
  issue_comment:
    types: [created]
  # The dispatch workflow never checks out or runs pull request code outside the agent's
  # sandbox, and Route admits only authors with at least triage permission (or Apps).
  pull_request_target:  # zizmor: ignore[dangerous-triggers]
    types: [opened, synchronize, ready_for_review, closed, labeled, unlabeled]
  pull_request_review:
    types: [submitted]
  pull_request_review_comment:
    types: [created]
"""
SHIM = Path(".github/workflows/fullsend.yml")


def test_upgrade_narrows_an_older_shims_events_to_its_stages(tmp_path: Path) -> None:
    """An older init's shim listened to every event (an issue opened started a Route job in a
    review,fix setup); the upgrade rewrites it to the events of the recorded stages."""
    made = _fullsend("init", "--stages", "review,fix", "--ref", OLD_REF, "--dispatch", "self-contained", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    text = (tmp_path / SHIM).read_text()
    start, end = text.index("# The events on which Route"), text.index("\npermissions: {}")
    old = text[:start] + EVERY_EVENT_ON + text[end:]
    (tmp_path / SHIM).write_text(old)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    manifest["files"][str(SHIM)] = digest(old)
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))

    shown = _fullsend("init", "--upgrade", "--ref", OLD_REF, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"update  {SHIM}" in shown.stdout
    assert (
        "-  issues:\n" in shown.stdout
        and "+    types: [opened, synchronize, ready_for_review, labeled]\n" in shown.stdout
    )
    applied = _fullsend("init", "--upgrade", "--apply", "--ref", OLD_REF, cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    on = yaml.safe_load((tmp_path / SHIM).read_text())[True]
    assert {event: spec["types"] for event, spec in on.items()} == {
        event: list(types) for event, types in shim_triggers(("review", "fix")).items()
    }
    assert "issues" not in on
    assert json.loads((tmp_path / MANIFEST).read_text())["files"][str(SHIM)] == digest((tmp_path / SHIM).read_text())
    again = _fullsend("init", "--upgrade", "--ref", OLD_REF, cwd=tmp_path)
    assert again.returncode == 0 and "Up to date" in again.stdout, again.stdout + again.stderr
