"""Start the action the way a GitHub runner starts a container action: a subprocess with the
runner's environment (``INPUT_*``, ``GITHUB_*``), against the simulator on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fullsend.simulator.fixtures import StandardScenario, oidc_request_token, shim_workflow_ref
from fullsend.simulator.server import GitHubSimulator

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The suite's entry: the action with the simulator's deployment (receipts without a child user
#: for the simulator's public job token; docs/rules.md#token-in-reach).  ``entrypoint.py`` is the
#: image's, which always runs the shipped deployment.
SIM_ENTRY = REPO_ROOT / "tests" / "support" / "sim_entry.py"


@dataclass
class ActionRun:
    """A finished action process: exit code, stdout, outputs, summary and the agent's log."""

    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    agent_messages: list[str]


def parse_outputs(text: str) -> dict[str, str]:
    """Parse ``GITHUB_OUTPUT`` written with the ``name<<DELIM`` syntax."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line:
            name, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1 : j])
            i = j + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
            i += 1
        else:
            i += 1
    return out


def runner_env(
    tmp: Path,
    sim: GitHubSimulator,
    fix: StandardScenario,
    *,
    run_id: int | None = None,
    inputs: dict[str, str] | None = None,
    event: dict[str, Any] | None = None,
) -> dict[str, str]:
    """The environment a runner gives the action's container (action.yml), with every input."""
    workspace = tmp / "workspace"
    workspace.mkdir(exist_ok=True)
    files = tmp / "file_commands"
    files.mkdir(exist_ok=True)
    event_path = tmp / "event.json"
    event_path.write_text(
        json.dumps(
            event
            or {
                "action": "created",
                "issue": {"number": fix.pr, "pull_request": {"url": f"{sim.api_url}/repos/org/repo/pulls/{fix.pr}"}},
                "comment": {"id": 1, "body": "/fs-review", "user": {"login": "reviewer", "type": "User"}},
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ACTIONS_"))}
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_API_URL": sim.api_url,
            "GITHUB_GRAPHQL_URL": sim.graphql_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "org/repo",
            "GITHUB_RUN_ID": str(run_id or fix.my_run_id),
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKFLOW_REF": shim_workflow_ref(sim),
            # the stage job's id-token: write: the simulator's token service signs its receipt
            "ACTIONS_ID_TOKEN_REQUEST_URL": sim.oidc_request_url,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc_request_token(sim, run_id or fix.my_run_id),
            "GITHUB_JOB": "review",
            "GITHUB_EVENT_NAME": "issue_comment",
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(files / "output"),
            "GITHUB_STEP_SUMMARY": str(files / "summary"),
            "HOME": str(tmp / "home"),
            "SCRIPTED_AGENT_LOG": str(tmp / "agent.log"),
            "SCRIPTED_AGENT_TURN_S": "6",
        }
    )
    agent = shutil.which("fullsend-scripted-agent") or str(Path(sys.executable).parent / "fullsend-scripted-agent")
    all_inputs = {
        "github_token": fix.job_token,
        "role_token": fix.role_token,
        "mint_url": "",
        "role": "",
        "stage": "review",
        "item": "",
        "runtime": "claude",
        "agent_cli": agent,
        "model": "",
        "fallback_models": "",
        "agent_args": "",
        "prompt": "Review the pull request.",
        "prompt_file": "",
        "harness": "",
        "steer_enabled": "",
        "max_steers": "",
        "poll_interval_seconds": "1",
        "status_interval_seconds": "1",  # the closing edit waits out at most this (docs/architecture.md "Status comments")
        "timeout_minutes": "30",
        "sandbox": "local",
        "openshell_cli": "",
        "self_logins": "",
        "review_bot_logins": "",
        "pre_script": "",
        "post_script": "",
        "validation_script": "",
        "max_iterations": "1",
        "status_comment": "true",
        "allow_unsigned_receipts": "false",
        "receipt_issuer": sim.issuer.url,  # the simulator plays the OIDC issuer (fullsend.simulator.issuer)
        "fullsend_dir": ".fullsend",
    }
    all_inputs.update(inputs or {})
    env.update({f"INPUT_{k.upper()}": v for k, v in all_inputs.items()})
    return env


def run_entrypoint(
    env: dict[str, str],
    tmp: Path,
    timeout_s: float = 120,
    launcher: Sequence[str] = (sys.executable,),
    entrypoint: Path = SIM_ENTRY,
) -> ActionRun:
    """Run the entrypoint as the container would, and collect what it wrote.
    ``launcher``: the argv that runs the entrypoint (e.g. ``setpriv … /usr/bin/python3``);
    ``entrypoint``: which one (default :data:`SIM_ENTRY`; the image's ``entrypoint.py`` runs the
    shipped deployment; the package beside it is the one that runs)."""
    proc = subprocess.run(
        [*launcher, str(entrypoint)],
        env=env,
        cwd=env["GITHUB_WORKSPACE"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    out_file, summary_file, log_file = Path(env["GITHUB_OUTPUT"]), Path(env["GITHUB_STEP_SUMMARY"]), tmp / "agent.log"
    messages = [json.loads(line)["text"] for line in log_file.read_text().splitlines()] if log_file.exists() else []
    return ActionRun(
        exit_code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr,
        outputs=parse_outputs(out_file.read_text()) if out_file.exists() else {},
        summary=summary_file.read_text() if summary_file.exists() else "",
        agent_messages=messages,
    )
