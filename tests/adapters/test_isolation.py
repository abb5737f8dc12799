"""``fullsend.adapters.isolation`` on this machine (needs root and setpriv): the child user's
process, the hand-over and hand-back of a tree, and the end of every process of the child uid."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fullsend.adapters import isolation, proc
from fullsend.adapters.sandbox.local import LocalSandbox
from tests.support.child_uid import worker_child_uid
from tests.support.tools import missing_tool

CHILD_UID = worker_child_uid(61800)  # one uid per xdist worker: a run ends every process of its child uid
ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def user() -> isolation.ChildUser:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        missing_tool("root and setpriv (util-linux)", "run the tests as root on Linux (apt-get install -y util-linux)")
    child, why = isolation.resolve_child_user({"FULLSEND_TEST_HOOKS": "1", "FULLSEND_TEST_CHILD_UID": str(CHILD_UID)})
    assert child is not None, why
    return child


def _status(text: str) -> dict[str, str]:
    return {k: v.strip() for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def test_a_child_runs_under_its_uid_without_capabilities_or_new_privileges(user):
    status = _status(proc.run_command(["cat", "/proc/self/status"], timeout_s=10, env=ENV, user=user).stdout)
    assert status["Uid"].split() == [str(CHILD_UID)] * 4 and status["Gid"].split() == [str(CHILD_UID)] * 4
    assert status["Groups"] == ""
    assert {status[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}
    assert status["NoNewPrivs"] == "1"


def test_the_uid_hook_without_the_test_mode_flag_does_nothing(user):
    child, why = isolation.resolve_child_user({"FULLSEND_TEST_CHILD_UID": str(CHILD_UID)})
    if child is None:  # this machine has no fullsend-agent user
        assert why == "the image has no user fullsend-agent (the action's Dockerfile creates it)"
    else:
        assert (child.name, child.uid != CHILD_UID) == (isolation.CHILD_USER, True)


def test_the_tree_is_handed_over_and_back_without_following_a_link(user, tmp_path):
    tree = tmp_path / "workspace"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "app.py").write_text("print(1)\n")
    (tree / "left-by-another-step").write_text("x")
    os.chown(tree / "left-by-another-step", 1234, 4321)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the child's")
    (tree / "link").symlink_to(outside)
    handover = isolation.hand_over([tree], user)
    owned = {p.relative_to(tree).as_posix(): (p.lstat().st_uid, p.lstat().st_gid) for p in [tree, *tree.rglob("*")]}
    assert set(owned.values()) == {(CHILD_UID, CHILD_UID)}
    assert outside.stat().st_uid == 0
    proc.run_command(["sh", "-c", "mkdir -p src/new && echo hi > src/new/made.txt && echo more >> src/app.py"],
                     timeout_s=10, env=ENV, cwd=tree, user=user)
    assert handover.hand_back() == 0
    owners = {p.relative_to(tree).as_posix(): (p.lstat().st_uid, p.lstat().st_gid) for p in [tree, *tree.rglob("*")]}
    assert owners.pop("left-by-another-step") == (1234, 4321)
    assert set(owners.values()) == {(0, 0)}  # the root's owner, created files included
    assert (tree / "src" / "new" / "made.txt").read_text() == "hi\n"
    assert outside.stat().st_uid == 0


def test_every_process_of_the_child_uid_ends_even_one_that_left_its_group(user, tmp_path):
    proc.run_command(["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null &"], timeout_s=10, env=ENV, user=user)
    assert isolation._processes_of(CHILD_UID)
    assert isolation.end_processes_of(CHILD_UID) >= 1
    assert isolation._processes_of(CHILD_UID) == []


def test_a_local_sandbox_with_a_child_user_runs_every_process_as_it(user):
    sandbox = LocalSandbox("iso", user=user)
    try:
        cfg = sandbox.root / "cfg" / "deeper"
        sandbox.make_dir(cfg)
        assert {(p.stat().st_uid, p.stat().st_gid) for p in (sandbox.root, cfg, cfg.parent)} == {(CHILD_UID, CHILD_UID)}
        result = sandbox.exec(f"id -u > {cfg}/who && cat {cfg}/who", timeout_s=10)
        assert (result.stdout.strip(), result.exit_code) == (str(CHILD_UID), 0)
        assert _status(Path(f"/proc/{sandbox.pgid}/status").read_text())["Uid"].split()[0] == str(CHILD_UID)
    finally:
        sandbox.delete()
