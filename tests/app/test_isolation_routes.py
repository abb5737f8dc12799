"""Issue 45: the routes to a forged receipt found through the whole action, replayed; each ends in a
refusal before any child, or in a run whose planted code finds no token.

1. A non-root action started from a shell step that stays (``sh -c "python … run; echo step-done"``)
   with ``GITHUB_TOKEN`` in the shell's environment: an agent of the action's uid could read the
   shell's ``/proc/<pid>/environ``.  Refused.
2. Root without the child user, started through ``capsh --drop=cap_sys_ptrace``, from a package on a
   writable path with a template the agent could rewrite: refused before any child without
   ``allow_shared_uid``; with it the planted template runs in the agent stage, which holds no token.
3. A cloud credential file carrying the OIDC request token: removed before the agent starts
   (``tests/app/test_hostile_agent.py``, deployment ``gha-creds``).

Every route runs the image's ``entrypoint.py`` (the shipped deployment) with the simulator's own
job token on loopback and the old test hooks set in the environment: the action's own entry has
no way to relax the check (docs/rules.md#token-in-reach).  Needs root and util-linux's setpriv (and libcap's
capsh for route 2).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.app import test_hostile_agent as hostile
from tests.support.action_run import run_entrypoint, runner_env
from tests.support.tools import missing_tool

pytestmark = pytest.mark.timeout(240)
run_dir = hostile.run_dir  # the fixture: a fresh folder every uid can traverse (root and setpriv, else skipped)
CHILD_UID, PYTHON, readable_package = hostile.CHILD_UID, hostile.PYTHON, hostile.readable_package
#: A template every run renders after the agent (the terminal status comment); the planted line
#: records that it ran, and whether anything it can reach holds the job token.
TEMPLATE = Path("fullsend/templates/receipt/status_terminal.md.j2")
PLANT = "{{ cycler.__init__.__globals__.__builtins__.__import__('runpy').run_path(%r) and '' }}"  # runs the probe
PROBE = """
import gc, json, os
needle = os.environ.get("ROUTE_NEEDLE_A", "") + os.environ.get("ROUTE_NEEDLE_B", "")
held = any(isinstance(o, str) and o is not needle and needle in o for o in gc.get_objects())
held = held or any(needle in v for v in os.environ.values())
with open(os.environ["ROUTE_REPORT"], "w") as fh:
    json.dump({"pid": os.getpid(), "holds_the_job_token": held}, fh)
"""


def _env(run_dir: Path, sim: GitHubSimulator, **inputs: str) -> dict[str, str]:
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    env = runner_env(run_dir, sim, fix, inputs=inputs or None)
    # A workflow may set any variable: the old test hooks (issue 44 removed them) change nothing.
    env.update({"FULLSEND_TEST_HOOKS": "1", "FULLSEND_TEST_CHILD_UID": str(CHILD_UID)})
    Path(env["HOME"]).mkdir(exist_ok=True)
    return env


def _errors(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("::error")]


def test_route_1_a_non_root_action_under_a_shell_holding_the_token_is_refused(run_dir):
    with GitHubSimulator() as sim:
        env = _env(run_dir, sim)
        env["GITHUB_TOKEN"] = env["INPUT_GITHUB_TOKEN"]  # as many run: steps hold it
        package = readable_package(run_dir)
        # the system interpreter under the child uid, this venv's packages on its path (as test_hostile_agent)
        env["PYTHONPATH"] = os.pathsep.join([str(package), *site.getsitepackages()])
        for path in [run_dir, *run_dir.rglob("*")]:
            os.lchown(path, CHILD_UID, CHILD_UID)
        shell = [
            shutil.which("setpriv") or "setpriv",
            f"--reuid={CHILD_UID}",
            f"--regid={CHILD_UID}",
            "--clear-groups",
            "sh",
            "-c",
            f"'{PYTHON}' \"$0\"; echo step-done",
        ]
        run = run_entrypoint(env, run_dir, launcher=shell, entrypoint=package / "entrypoint.py")
    assert run.stdout.rstrip().endswith("step-done")  # the shell stayed above the action, and ended the step
    assert run.agent_messages == [] and run.outputs == {}, run.stdout + run.stderr  # refused before any child
    errors = _errors(run.stdout)
    assert len(errors) == 1, run.stdout
    assert "holds the job token in its environment" in errors[0] and ", sh)" in errors[0], errors
    assert "[token-in-reach]" in errors[0] and "Traceback" not in run.stderr


@pytest.mark.parametrize("allow_shared_uid", [False, True], ids=["refused", "allowed"])
def test_route_2_root_without_the_child_user_never_runs_planted_code_holding_a_token(
    run_dir,
    allow_shared_uid,
):
    if shutil.which("capsh") is None:
        missing_tool("capsh (libcap)", "apt-get install -y libcap2-bin")
    with GitHubSimulator() as sim:
        env = _env(run_dir, sim, **({"allow_shared_uid": "true"} if allow_shared_uid else {}))
        package = readable_package(run_dir)  # the action's files, where a root child may write
        probe, report = run_dir / "probe.py", run_dir / "route-report.json"
        probe.write_text(PROBE)
        template = package / TEMPLATE
        template.write_text(template.read_text() + PLANT % str(probe))  # what the agent appended
        token = env["INPUT_GITHUB_TOKEN"]
        env.update(
            {
                "PYTHONPATH": str(package),
                "ROUTE_REPORT": str(report),
                "ROUTE_NEEDLE_A": token[: len(token) // 2],
                "ROUTE_NEEDLE_B": token[len(token) // 2 :],
            }
        )
        launcher = [
            shutil.which("capsh") or "capsh",
            "--drop=cap_sys_ptrace",
            "--",
            "-c",
            f'exec "{sys.executable}" "$0"',
        ]
        run = run_entrypoint(env, run_dir, launcher=launcher, entrypoint=package / "entrypoint.py")
        by_job = [c for c in sim.comments(7) if c["user"]["login"] == "github-actions[bot]"]
    if not allow_shared_uid:
        assert run.exit_code == 2, run.stdout + run.stderr
        errors = _errors(run.stdout)
        assert len(errors) == 1 and "The agent would run under the action's own user" in errors[0], run.stdout
        assert not report.exists() and run.agent_messages == []  # refused before any child: nothing rendered
        return
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "the work goes on in a new process that never held the job token" in run.stdout
    planted = json.loads(report.read_text())  # the planted template ran …
    assert planted["holds_the_job_token"] is False, planted  # … in a process that never held the token
    assert by_job == [] and run.outputs["receipt_url"] == ""
