"""``fullsend.adapters.confinement.isolation`` on this machine (needs root and setpriv): the child user's
process, the hand-over and hand-back of a tree, and the end of every process of the child uid."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fullsend.adapters.confinement import isolation, proc
from fullsend.adapters.sandbox.local import LocalSandbox
from tests.support.child_uid import worker_child_uid
from tests.support.tools import missing_tool

CHILD_UID = worker_child_uid(61800)  # one uid per xdist worker: a run ends every process of its child uid
ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def user() -> isolation.ChildUser:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        missing_tool("root and setpriv (util-linux)", "run the tests as root on Linux (apt-get install -y util-linux)")
    child, why = isolation.resolve_child_user(CHILD_UID)
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


def test_no_environment_variable_names_the_child_user(user, monkeypatch):
    """Only a deployment composed in code gives a uid (docs/rules.md#token-in-reach): the old test
    hooks, set in the environment, change nothing."""
    monkeypatch.setenv("FULLSEND_TEST_HOOKS", "1")
    monkeypatch.setenv("FULLSEND_TEST_CHILD_UID", str(CHILD_UID))
    child, why = isolation.resolve_child_user()
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
    proc.run_command(
        ["sh", "-c", "mkdir -p src/new && echo hi > src/new/made.txt && echo more >> src/app.py"],
        timeout_s=10,
        env=ENV,
        cwd=tree,
        user=user,
    )
    assert handover.hand_back() == 0
    owners = {p.relative_to(tree).as_posix(): (p.lstat().st_uid, p.lstat().st_gid) for p in [tree, *tree.rglob("*")]}
    assert owners.pop("left-by-another-step") == (1234, 4321)
    assert set(owners.values()) == {(0, 0)}  # the root's owner, created files included
    assert (tree / "src" / "new" / "made.txt").read_text() == "hi\n"
    assert outside.stat().st_uid == 0


#: A "run": a process that becomes a subreaper, starts a child-uid daemon that leaves its group
#: and its parent, says its pid, waits for a line on stdin, then ends its run's processes and says
#: how many it killed.
RUN = """
import subprocess, sys
from fullsend.adapters.confinement import isolation
assert isolation.become_subreaper()
uid = int(sys.argv[1])
user, why = isolation.resolve_child_user(uid)
out = subprocess.run(user.argv(["sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!"]),
                     capture_output=True, text=True, check=True).stdout.strip()
print(out, flush=True)
sys.stdin.readline()
print(isolation.end_processes_of(uid), flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_a_run_ends_its_own_orphans_of_the_child_uid_and_not_another_runs(user):
    """Two runs share the child uid and this PID namespace (as the suite's do): each one's end
    kills the daemon it left (re-parented to it, the subreaper) and leaves the other's alive."""
    import subprocess
    import sys

    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RUN, str(CHILD_UID)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    try:
        daemons = [int(run.stdout.readline()) for run in runs]
        assert all(_alive(pid) for pid in daemons)
        first = runs[0]
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.stdout.readline().strip() == "1"
        assert (_alive(daemons[0]), _alive(daemons[1])) == (False, True)
    finally:
        for run in runs:
            run.communicate("\n", timeout=30)
    assert not any(_alive(pid) for pid in daemons)


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


def test_a_timeout_ends_a_child_that_left_the_group_and_holds_the_agents_stdout(user):
    """The agent's timeout binds the whole tree: a child under ``setsid`` that keeps the agent's
    stdout open is ended with the group, so the run returns, timed out, instead of waiting for it."""
    import tempfile

    from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
    from fullsend.adapters.sandbox.local import local_sandbox_factory
    from fullsend.ports import AgentParams
    from tests.support.transport_run import RunThread

    root = Path(tempfile.mkdtemp(prefix="fullsend-timeout-"))
    try:
        root.chmod(0o755)
        agent, work, pids = root / "agent", root / "work", root / "pids"
        for folder in (work, pids):
            folder.mkdir()
            folder.chmod(0o777)
        agent.write_text(f"#!/bin/sh\nsetsid sleep 300 &\necho $! > {pids / 'escaped'}\nsleep 300\n")
        agent.chmod(0o755)
        runtime = ClaudeRuntime(sandbox_root_parent=root, sandbox_factory=local_sandbox_factory(root, user=user))
        params = AgentParams(
            sandbox_name="sb-escape",
            agent_cli=str(agent),
            prompt="p",
            workdir=work,
            env={},
            steerable=False,
            timeout_s=2.0,
        )
        run = RunThread(runtime, params).start()
        run._thread.join(timeout=60)
        assert not run._thread.is_alive(), "the run still waits on the escaped child's stdout"
        assert run.result is not None and run.result.timed_out and run.result.is_error, run.result
        assert not _alive(int((pids / "escaped").read_text()))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_make_dir_never_follows_a_link_a_child_planted(user, tmp_path):
    """A child that planted a link where the action later makes a folder: the action refuses,
    naming the component, and creates nothing through it."""
    from fullsend.errors import SandboxError

    sandbox = LocalSandbox("iso-link", user=user)
    outside = tmp_path / "outside"
    outside.mkdir()
    try:
        (sandbox.root / "cfg").symlink_to(outside)
        with pytest.raises(SandboxError, match="'cfg' without following a link"):
            sandbox.make_dir(sandbox.root / "cfg" / "deeper")
        assert list(outside.iterdir()) == []
        with pytest.raises(SandboxError, match="outside the sandbox root"):
            sandbox.make_dir(sandbox.root / ".." / "escaped")
    finally:
        sandbox.delete()


def test_upload_never_writes_through_a_link_a_child_planted(user, tmp_path):
    """A link where the action uploads a file: the link is replaced by a fresh file, its target
    left as it was; the file is the child user's."""
    sandbox = LocalSandbox("iso-upload", user=user)
    target, src = tmp_path / "root-owned.txt", tmp_path / "src.txt"
    target.write_text("root's own\n")
    src.write_text("uploaded\n")
    try:
        (sandbox.root / "env").symlink_to(target)
        sandbox.upload(src, sandbox.root / "env")
        assert target.read_text() == "root's own\n"
        placed = sandbox.root / "env"
        assert not placed.is_symlink() and placed.read_text() == "uploaded\n"
        assert placed.stat().st_uid == CHILD_UID
    finally:
        sandbox.delete()
