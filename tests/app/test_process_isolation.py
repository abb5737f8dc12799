"""Critical path of BC-17 / ADR 0120: the agent, a child of the action in the same container, must
not recover the job token from the action's own process (``/proc/<pid>/environ`` holds the
environment a process was started with, whatever it later removes)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

from fullsend.core.model import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.app.e2e_helpers import run_entrypoint, runner_env

SNOOPING_AGENT = '''#!{python}
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
'''


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
