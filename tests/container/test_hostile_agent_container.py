"""Issue 19 acceptance in the real container: the image built from the Dockerfile, run the way a
runner runs a container action (its mounts, ``INPUT_*``, ``GITHUB_*``, and a step env that also
carries the job token as ``GITHUB_TOKEN`` and ``GH_TOKEN``), with the workspace, ``HOME`` and the
file-command files owned by a runner-like uid.

A hostile agent, then the same hunt as a post-script, search ``/proc`` of every process they can
see (environ, cmdline, memory), the descriptors they inherited, the workspace, ``HOME`` and the
temp dirs for the job token and the runner's secrets, and try to write every file-command file
(tests/doubles/hostile_agent.py).  They find nothing, write nothing, and change no output; the
files they created belong to the workspace's owner afterwards.  The same again with
``CAP_SYS_PTRACE`` added to the container.
"""

from __future__ import annotations

import json
import os
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.hostile_agent import HUNTER, hunt_env
from tests.support.runner_container import (
    CONTAINER_FILE_COMMANDS,
    CONTAINER_WORKSPACE,
    REPO_ROOT,
    RunnerDirs,
    action_inputs,
    container_env,
    run_container,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.full,
    pytest.mark.xdist_group("podman"),
    pytest.mark.container,
    pytest.mark.timeout(1200),
]
RUNNER_UID = 1001  # the runner's account on GitHub's images: it owns the mounted directories
CHILD_UID = 61000  # the Dockerfile's fullsend-agent
#: What a stage's run writes: every output of action.yml but command route's.
DECLARED_OUTPUTS = set(yaml.safe_load((REPO_ROOT / "action.yml").read_text())["outputs"]) - {
    "stage",
    "rule",
    "reason",
    "head_ref",
}
TEST_DIR = f"{CONTAINER_WORKSPACE}/.fullsend-test"


def _event(sim: GitHubSimulator, pr: int) -> dict:
    return {
        "action": "created",
        "issue": {"number": pr, "pull_request": {"url": f"{sim.api_url}/repos/org/repo/pulls/{pr}"}},
        "comment": {"id": 1, "body": "/fs-review", "user": {"login": "reviewer", "type": "User"}},
    }


def _runner_files(dirs: RunnerDirs) -> dict[str, Path]:
    """The five file-command files, named as the runner names them, owned by the runner's uid."""
    files = {
        "GITHUB_OUTPUT": dirs.output_file,
        "GITHUB_STEP_SUMMARY": dirs.summary_file,
        "GITHUB_ENV": dirs.file_commands / f"set_env_{dirs.step_id}",
        "GITHUB_PATH": dirs.file_commands / f"add_path_{dirs.step_id}",
        "GITHUB_STATE": dirs.file_commands / f"save_state_{dirs.step_id}",
    }
    for path in files.values():
        path.touch()
    return files


def _hunt(image: str, root: Path, extra_args: tuple[str, ...]):
    job_token, runtime_token, oidc_token = (
        f"ghs_hunt{secrets.token_hex(16)}",
        f"rt-{secrets.token_hex(16)}",
        f"oidc-{secrets.token_hex(16)}",
    )
    decoy = f"decoy-{secrets.token_hex(8)}"
    dirs = RunnerDirs.create(root)
    files = _runner_files(dirs)
    test_dir = dirs.workspace / ".fullsend-test"
    (dirs.workspace / ".hunt").mkdir()
    test_dir.mkdir()
    (test_dir / "hunter.py").write_text(HUNTER)
    (test_dir / "agent").write_text(f'#!/bin/sh\nexec python {TEST_DIR}/hunter.py agent "$@"\n')
    (test_dir / "agent").chmod(0o755)
    (dirs.workspace / "notes.txt").write_text(decoy)
    for path in (dirs.workspace, dirs.home, dirs.file_commands, *dirs.workspace.rglob("*"), *files.values()):
        os.chown(path, RUNNER_UID, RUNNER_UID)
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_token(job_token, fix.job_login, "Bot")
        inputs = action_inputs(
            job_token,
            {
                "role_token": fix.role_token,
                "stage": "review",
                "agent_cli": f"{TEST_DIR}/agent",
                "prompt": "Review the pull request.",
                "poll_interval_seconds": "1",
                "post_script": f"python {TEST_DIR}/hunter.py post",
            },
        )
        step_env = {
            "SCRIPTED_AGENT_LOG": f"{TEST_DIR}/agent.log",
            "SCRIPTED_AGENT_TURN_S": "1",
            "GITHUB_TOKEN": job_token,
            "GH_TOKEN": job_token,
            "ACTIONS_RUNTIME_TOKEN": runtime_token,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc_token,
            **{
                key: f"{CONTAINER_FILE_COMMANDS}/{path.name}"
                for key, path in files.items()
                if key not in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
            },
            **hunt_env(
                {"job token": job_token, "runtime token": runtime_token, "oidc token": oidc_token, "decoy": decoy},
                f"{CONTAINER_WORKSPACE}/.hunt",
                [CONTAINER_FILE_COMMANDS],
            ),
        }
        env = container_env(
            dirs,
            api_url=sim.api_url,
            graphql_url=sim.graphql_url,
            run_id=fix.my_run_id,
            inputs=inputs,
            event=_event(sim, fix.pr),
            step_env=step_env,
        )
        run = run_container(image, dirs, env, extra_args=extra_args)
    return run, dirs, files


@pytest.mark.parametrize("extra_args", [(), ("--cap-add", "SYS_PTRACE")], ids=["default-caps", "cap-sys-ptrace"])
def test_a_hostile_agent_and_post_script_in_the_container_find_no_secret_and_change_no_output(
    core_image, tmp_path, extra_args
):
    run, dirs, files = _hunt(core_image, tmp_path / "run", extra_args)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert set(run.outputs) == DECLARED_OUTPUTS and run.outputs["outcome"] == "succeeded"
    assert "HUNTER-WROTE-THIS" not in run.summary
    for key in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"):
        assert files[key].read_text() == "", key
    assert sorted(dirs.file_commands.iterdir()) == sorted(files.values())
    assert "Per-uid isolation" not in run.stdout  # isolation was available in the image

    for who in ("agent", "post"):
        report = json.loads((dirs.workspace / ".hunt" / f"{who}.json").read_text())
        assert (report["uid"], report["euid"]) == (CHILD_UID, CHILD_UID), who
        assert report["found"] == [f"decoy in {CONTAINER_WORKSPACE}/notes.txt"], (who, report["found"])
        assert report["wrote"] == [], who
        assert report["home_writable"] is True, who
        assert "/proc/1/environ" in report["denied"] and "/proc/1/mem" in report["denied"], who
        assert report["processes"] > 0 and report["files"] > 0, who

    owners = {
        (p.lstat().st_uid, p.lstat().st_gid)
        for p in [dirs.workspace, dirs.home, *dirs.workspace.rglob("*"), *dirs.home.rglob("*")]
    }
    assert owners == {(RUNNER_UID, RUNNER_UID)}  # later steps of the job can clean everything
