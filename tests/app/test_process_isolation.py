"""Critical path of docs/architecture.md "Child isolation": the agent, a child of the action in the same container, must
not recover the job token from the action's own process (``/proc/<pid>/environ`` holds the
environment a process was started with, whatever it later removes)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import SIM_ENTRY, run_entrypoint, runner_env

SNOOPING_AGENT = """#!{python}
import json, os, sys
found = {{}}
pid = os.getppid()
while pid > 1:
    for name in ("environ", "cmdline"):
        try:
            found[f"{{pid}}/{{name}}"] = open(f"/proc/{{pid}}/{{name}}", "rb").read().decode("utf-8", "replace")
        except OSError as exc:
            found[f"{{pid}}/{{name}}"] = "unreadable: " + exc.__class__.__name__
    try:
        pid = int(open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
json.dump(found, open({out!r}, "w"))
os.execv({python!r}, [{python!r}, "-m", "fullsend.simulator.agent.main", *sys.argv[1:]])
"""


def test_the_agent_cannot_read_the_job_token_from_its_ancestors(tmp_path):
    out = tmp_path / "ancestors.json"
    agent = tmp_path / "snooping-agent"
    agent.write_text(SNOOPING_AGENT.format(python=sys.executable, out=str(out)))
    agent.chmod(0o755)
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp_path, sim, fix, inputs={"agent_cli": str(agent), "steer_enabled": "false"})
        env["ACTIONS_RUNTIME_TOKEN"] = "runtime-secret-8f1e2d"
        env["SCRIPTED_AGENT_TURN_S"] = "0.2"
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    seen = json.loads(out.read_text())
    assert seen, "the snooping agent saw no ancestor"
    for where, text in seen.items():
        for secret in (fix.job_token, fix.role_token, "runtime-secret-8f1e2d"):
            assert secret not in text, f"{secret[:8]}… readable in /proc/{where}"


def _wait_for(path: Path, proc: subprocess.Popen[str], limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the agent never started: {out}{err}")
        time.sleep(0.05)


def test_a_step_env_copy_of_the_job_token_under_any_name_leaves_the_action_environ(tmp_path):
    """Issue 19 A: the workflow also hands the job token to the step's env (``GITHUB_TOKEN``,
    ``GH_TOKEN``, any name, inside a header, base64): the re-executed action's initial
    environment, read from ``/proc/<pid>/environ`` while the agent runs, holds none of it."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp_path, sim, fix, inputs={"steer_enabled": "false"})
        basic = base64.b64encode(f"x-access-token:{fix.job_token}".encode()).decode()
        step_env = {
            "GITHUB_TOKEN": fix.job_token,
            "GH_TOKEN": fix.job_token,
            "MY_DEPLOY_SECRET": fix.job_token,
            "AUTH_HEADER": f"Bearer {fix.job_token}",
            "CHECKOUT_HEADER": f"AUTHORIZATION: basic {basic}",
            "B64_TOKEN": base64.b64encode(fix.job_token.encode()).decode(),
            "UNRELATED": "kept-as-is",
        }
        env.update(step_env)
        env.update({"SCRIPTED_AGENT_TURN_S": "3", "SCRIPTED_AGENT_ENV_DUMP": str(tmp_path / "agent-env.json")})
        proc = subprocess.Popen(
            [sys.executable, str(SIM_ENTRY)],
            env=env,
            cwd=env["GITHUB_WORKSPACE"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait_for(tmp_path / "agent-env.json", proc)
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().decode("utf-8", "replace").split("\0")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    names = {entry.partition("=")[0] for entry in environ if entry}
    assert "UNRELATED=kept-as-is" in environ
    assert names.isdisjoint(
        {
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "MY_DEPLOY_SECRET",
            "AUTH_HEADER",
            "CHECKOUT_HEADER",
            "B64_TOKEN",
            "INPUT_GITHUB_TOKEN",
            "INPUT_ROLE_TOKEN",
        }
    )
    for form in (fix.job_token, basic, step_env["B64_TOKEN"]):
        assert not [entry for entry in environ if form in entry]
    child = json.loads((tmp_path / "agent-env.json").read_text())
    assert child["UNRELATED"] == "kept-as-is" and child["GH_TOKEN"] == fix.role_token
