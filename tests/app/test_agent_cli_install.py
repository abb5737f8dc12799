"""Issue 20: in an image that installs the agent CLI after the pre-flight (``FULLSEND_AGENT_CLI_ROOT``,
the slim image), a skip installs nothing, a run that works installs the pinned CLI in a child
process without any token, and a failed install fails the run before anything is posted.

The action runs through the real entrypoint against the simulator (tests/support/action_run.py);
no claude is on ``PATH`` and ``agent_cli`` is empty, as in the slim image.  The working-path test
starts from an install root that already holds a complete install of the locked version whose
``claude`` is the scripted agent (the installer reuses it and runs the version check), so no
download happens; tests/adapters/agentcli checks the downloads and tests/container the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fullsend.adapters.agentcli.fetch import COMPLETE_MARK
from fullsend.adapters.agentcli.lock import Platform, plan_install
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_follow_up_run, genuine_receipt, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env
from tests.support.npm_registry import FakeRegistry

QUEUED_RUN_ID = 33740099999
#: The "claude" of the pre-made install: answers --version as the locked CLI (and writes down
#: the environment it got), otherwise is the scripted agent.
CLAUDE_STANDIN = """#!{python}
import json, os, sys
if sys.argv[1:] == ["--version"]:
    with open({env_log!r}, "a") as log:
        log.write(json.dumps(dict(os.environ)) + "\\n")
    print("{version} (Claude Code)")
    sys.exit(0)
os.execv({python!r}, [{python!r}, "-m", "fullsend.simulator.agent.main", *sys.argv[1:]])
"""


def _slim_env(tmp: Path, sim: GitHubSimulator, fix, root: Path, **kw) -> dict[str, str]:
    env = runner_env(tmp, sim, fix, inputs={"agent_cli": ""}, **kw)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env["FULLSEND_AGENT_CLI_ROOT"] = str(root)
    assert shutil.which("claude", path=env["PATH"]) is None
    return env


def _premade_install(root: Path, env_log: Path) -> None:
    plan = plan_install("claude", Platform.here())
    home = root / "lib" / f"claude-{plan.version}"
    exe = home / plan.executable
    exe.parent.mkdir(parents=True)
    exe.write_text(CLAUDE_STANDIN.format(python=sys.executable, env_log=str(env_log), version=plan.version))
    exe.chmod(0o755)
    (home / COMPLETE_MARK).write_text(plan.version + "\n")


def _scenario(sim: GitHubSimulator):
    return standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))


def test_the_skip_installs_nothing(tmp_path):
    root = tmp_path / "opt"
    with GitHubSimulator() as sim:
        fix = _scenario(sim)
        add_follow_up_run(sim, run_id=QUEUED_RUN_ID)
        sim.add_comment(fix.pr, genuine_receipt(sim, [QUEUED_RUN_ID], fix.head), fix.job_login)
        run = run_entrypoint(_slim_env(tmp_path, sim, fix, root, run_id=QUEUED_RUN_ID), tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "skipped" and run.outputs["skip_reason"] == "receipt"
    assert not root.exists()
    assert "Installed" not in run.stdout


def test_a_run_that_works_installs_the_pinned_cli_without_any_token(tmp_path):
    root, env_log = tmp_path / "opt", tmp_path / "installer-env.json"
    _premade_install(root, env_log)
    with GitHubSimulator() as sim:
        fix = _scenario(sim)
        run = run_entrypoint(_slim_env(tmp_path, sim, fix, root), tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded"
    assert run.agent_messages != []  # the installed "claude" did the work
    assert (root / "bin" / "claude").is_symlink()
    version = plan_install("claude", Platform.here()).version
    assert f"Installed the pinned claude {version}: 1 packages, 0.0 MB downloaded in " in run.stdout  # reused
    # The first --version is the installer's check (the second, the runtime's supported-version
    # check, runs with the agent's own environment, which holds the role token by design).
    seen = json.loads(env_log.read_text().splitlines()[0])
    assert not [k for k, v in seen.items() if fix.job_token in k + v or fix.role_token in k + v]
    assert not [k for k in seen if k.startswith("INPUT_") or k in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GH_TOKEN")]


def test_a_failed_install_fails_the_run_before_anything_is_posted(tmp_path):
    root = tmp_path / "opt"
    with GitHubSimulator() as sim, FakeRegistry({}) as registry:
        fix = _scenario(sim)
        env = _slim_env(tmp_path, sim, fix, root)
        env["npm_config_registry"] = registry.url  # serves nothing: every download is a 404
        run = run_entrypoint(env, tmp_path)
        posted = sim.comments(fix.pr)
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert (
        "::error::The run failed: the claude CLI could not be installed: agent CLI install failed: download of "
        in run.stdout
    )
    assert posted == []  # no status comment, no receipt
    assert not (root / "bin" / "claude").exists()
