"""Run the action image the way a GitHub runner runs a container action.

As GitHub documents for Docker container actions (docs/architecture.md "Runner I/O"): ``--workdir
/github/workspace``; the workspace, ``/github/home``, ``/github/workflow`` (event payload) and
``/github/file_commands`` mounted; every input declared in ``action.yml`` as ``INPUT_<NAME>`` (its
default when the workflow sets none); the ``GITHUB_*`` variables pointing at the container paths;
values handed over as ``-e NAME`` so no secret is on the command line.  The runner's job network
is replaced by ``--network host`` so the action reaches the simulator on the host's 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fullsend.simulator.fixtures import oidc_request_token, shim_workflow_ref
from fullsend.simulator.server import GitHubSimulator
from tests.container.runner_commands import parse_output_file

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_DIR = REPO_ROOT / "tools" / "container"
PODMAN_RUNTIME = os.environ.get("PODMAN_RUNTIME", "runc")
#: This machine kind refuses podman's default rlimits (issue 8).
PODMAN_LIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096")
CONTAINER_WORKSPACE = "/github/workspace"
CONTAINER_HOME = "/github/home"
CONTAINER_WORKFLOW = "/github/workflow"
CONTAINER_FILE_COMMANDS = "/github/file_commands"
#: The scripted agent shipped in the image, started through a wrapper in the workspace (the way
#: an earlier step of a job can put a CLI there).
AGENT_WRAPPER = '#!/bin/sh\nexec python -m fullsend.simulator.agent.main "$@"\n'
#: Measurements of this session, printed in the closing summary (conftest.py).
MEASUREMENTS: list[tuple[str, str]] = []


def record(label: str, value: str) -> None:
    """Keep a measurement for the session's closing summary (and print it for ``-s`` runs)."""
    MEASUREMENTS.append((label, value))
    print(f"{label}: {value}")


def action_inputs(github_token: str, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every input declared in ``action.yml`` with the value the runner gives it: the workflow's
    (``overrides``), else the default (``${{ github.token }}`` evaluates to ``github_token``),
    else ``""``.  Raises ``KeyError`` for an override that ``action.yml`` does not declare."""
    declared = yaml.safe_load((REPO_ROOT / "action.yml").read_text())["inputs"]
    values = {}
    for name, spec in declared.items():
        default = str((spec or {}).get("default", ""))
        values[name] = github_token if default.replace(" ", "") == "${{github.token}}" else default
    for name, value in (overrides or {}).items():
        if name not in values:
            raise KeyError(f"action.yml declares no input {name!r}")
        values[name] = value
    return values


def input_env(inputs: Mapping[str, str]) -> dict[str, str]:
    """``INPUT_`` + the name with spaces as ``_``, upper-cased, hyphens kept."""
    return {f"INPUT_{name.replace(' ', '_').upper()}": value for name, value in inputs.items()}


@dataclass(frozen=True)
class RunnerDirs:
    """The host side of the runner's four mounts, under ``root``, with the file-command files
    named as the runner names them (``set_output_<uuid>``, ``step_summary_<uuid>``)."""

    root: Path
    step_id: str

    @classmethod
    def create(cls, root: Path) -> RunnerDirs:
        dirs = cls(root, uuid.uuid4().hex)
        for path in (dirs.workspace, dirs.home, dirs.workflow, dirs.file_commands):
            path.mkdir(parents=True, exist_ok=True)
        dirs.output_file.touch()
        dirs.summary_file.touch()
        return dirs

    workspace = property(lambda self: self.root / "workspace")
    home = property(lambda self: self.root / "_github_home")
    workflow = property(lambda self: self.root / "_github_workflow")
    file_commands = property(lambda self: self.root / "_runner_file_commands")
    output_file = property(lambda self: self.file_commands / f"set_output_{self.step_id}")
    summary_file = property(lambda self: self.file_commands / f"step_summary_{self.step_id}")

    def mounts(self) -> list[str]:
        pairs = (
            (self.workspace, CONTAINER_WORKSPACE),
            (self.home, CONTAINER_HOME),
            (self.workflow, CONTAINER_WORKFLOW),
            (self.file_commands, CONTAINER_FILE_COMMANDS),
        )
        return [arg for host, inside in pairs for arg in ("-v", f"{host}:{inside}")]

    def install_agent(self) -> str:
        """Write the scripted-agent wrapper into the workspace; returns its container path."""
        wrapper = self.workspace / ".fullsend-test" / "agent"
        wrapper.parent.mkdir(parents=True, exist_ok=True)
        wrapper.write_text(AGENT_WRAPPER)
        wrapper.chmod(0o755)
        return f"{CONTAINER_WORKSPACE}/.fullsend-test/agent"

    @property
    def agent_log(self) -> Path:
        return self.workspace / ".fullsend-test" / "agent.log"


def container_env(
    dirs: RunnerDirs,
    *,
    api_url: str,
    graphql_url: str,
    run_id: int,
    inputs: Mapping[str, str],
    event: dict[str, Any],
    step_env: Mapping[str, str],
    id_token: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment the runner gives the container: default ``GITHUB_*`` variables with
    container paths, ``HOME``, every ``INPUT_*``, the job's ``id-token: write`` variables
    (``id_token``, see :func:`signing_env`) and the step's own ``env:`` (``step_env``)."""
    (dirs.workflow / "event.json").write_text(json.dumps(event))
    env = {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "HOME": CONTAINER_HOME,
        "GITHUB_API_URL": api_url,
        "GITHUB_GRAPHQL_URL": graphql_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": "org/repo",
        "GITHUB_RUN_ID": str(run_id),
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": "review",
        "GITHUB_EVENT_NAME": "issue_comment",
        "GITHUB_ACTOR": "reviewer",
        "GITHUB_EVENT_PATH": f"{CONTAINER_WORKFLOW}/event.json",
        "GITHUB_WORKSPACE": CONTAINER_WORKSPACE,
        "GITHUB_OUTPUT": f"{CONTAINER_FILE_COMMANDS}/{dirs.output_file.name}",
        "GITHUB_STEP_SUMMARY": f"{CONTAINER_FILE_COMMANDS}/{dirs.summary_file.name}",
    }
    env.update(input_env(inputs))
    env.update(id_token or {})
    env.update(step_env)
    return env


def signing_env(sim: GitHubSimulator, run_id: int) -> dict[str, str]:
    """What a stage job with ``id-token: write`` has on a runner, against the simulator's OIDC
    issuer: ``ACTIONS_ID_TOKEN_REQUEST_URL`` and ``_TOKEN`` for run ``run_id``, and the shim's
    ``GITHUB_WORKFLOW_REF`` (the receipt's proof names them)."""
    return {
        "ACTIONS_ID_TOKEN_REQUEST_URL": sim.oidc_request_url,
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc_request_token(sim, run_id),
        "GITHUB_WORKFLOW_REF": shim_workflow_ref(sim),
    }


@dataclass
class ContainerRun:
    """A finished ``podman run``: exit code, both streams, what the mounted files received,
    the agent's consumed messages and when (``time.monotonic()``) ``podman run`` started and ended."""

    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    agent_messages: list[str]
    started_at: float
    finished_at: float = 0.0


def podman_run_argv(
    image: str, dirs: RunnerDirs, env_names: list[str], name: str, extra_args: tuple[str, ...] = ()
) -> list[str]:
    """``podman run`` as the runner's ``docker run`` (values of ``env_names`` come from the
    podman process's environment, never the command line); ``extra_args`` (e.g. ``--cap-add``)
    go before the image."""
    env_args = [arg for key in env_names for arg in ("-e", key)]
    return [
        "podman",
        "run",
        "--runtime",
        PODMAN_RUNTIME,
        "--name",
        name,
        "--rm",
        *PODMAN_LIMITS,
        "--workdir",
        CONTAINER_WORKSPACE,
        "--network",
        "host",
        *env_args,
        *dirs.mounts(),
        *extra_args,
        image,
    ]


def run_container(
    image: str, dirs: RunnerDirs, env: Mapping[str, str], timeout_s: float = 240, extra_args: tuple[str, ...] = ()
) -> ContainerRun:
    """Run the action's image once (``extra_args`` added to ``podman run``) and collect what it
    wrote (kills it after ``timeout_s``)."""
    name = f"fullsend-test-{uuid.uuid4().hex[:12]}"
    host_env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR", "XDG_RUNTIME_DIR")}
    host_env.setdefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    started = time.monotonic()
    try:
        proc = subprocess.run(
            podman_run_argv(image, dirs, sorted(env), name, extra_args),
            env={**host_env, **env},
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        subprocess.run(["podman", "rm", "--force", "--time", "0", name], capture_output=True, timeout=60)
        raise
    finished = time.monotonic()
    log = dirs.agent_log
    messages = [json.loads(line)["text"] for line in log.read_text().splitlines()] if log.exists() else []
    return ContainerRun(
        proc.returncode,
        proc.stdout,
        proc.stderr,
        parse_output_file(dirs.output_file.read_text()),
        dirs.summary_file.read_text(),
        messages,
        started,
        finished,
    )
