"""Issue 20: the queued run's skip loads only what it uses.

The action runs as a subprocess exactly as in the end-to-end tests (the real entrypoint, the
runner's environment, the simulator on 127.0.0.1), with one addition: a ``sitecustomize`` on
``PYTHONPATH`` that writes down ``sys.modules`` at the re-execution (``os.execve``) and when the
re-executed process exits.  Nothing is timed here; ``bench/bench_start.py`` measures the time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fullsend.core.receipt.marker import receipt_body
from fullsend.simulator.fixtures import add_follow_up_run, genuine_receipt, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

QUEUED_RUN_ID = 33740099999
#: Written into the child's ``PYTHONPATH``: records the loaded modules of each process.
SITECUSTOMIZE = """
import atexit, json, os, sys

def _dump(stage):
    sanitize = sys.modules.get("fullsend.core.text.sanitize")
    record = {"stage": stage, "modules": sorted(sys.modules),
              "sanitizer_tables": bool(sanitize and sanitize._tables.cache_info().currsize > 0)}
    with open(os.environ["FULLSEND_TEST_MODULES_LOG"], "a") as fh:
        fh.write(json.dumps(record) + "\\n")

_execve = os.execve

def _recording_execve(*args):
    _dump("re-exec")
    return _execve(*args)

os.execve = _recording_execve
atexit.register(_dump, "exit")
"""
#: Modules a skip has no use for: the agent side, the watcher, the steer text and its templates.
NOT_ON_THE_SKIP_PATH = (
    "fullsend.adapters.runtimes",
    "fullsend.adapters.sandbox",
    "fullsend.adapters.confinement.proc",
    "fullsend.app.watch",
    "fullsend.app.action.agent.work",
    "fullsend.app.action.agent.session",
    "fullsend.app.action.status.status",
    "fullsend.app.action.agent.scripts",
    "fullsend.core.delta",
    "fullsend.core.watch.settle",
    "fullsend.core.watch.start",
    "fullsend.core.text.envelope",
    "fullsend.core.text.steertext",
    "fullsend.core.text.defang",
    "fullsend.wording",
)
#: What the first process must not load before it re-executes itself (it may hold the signals:
#: ``fullsend.app.action.cancel``).
NOT_BEFORE_THE_REEXEC = (
    "fullsend.app.action.lifecycle",
    "fullsend.app.action.plan",
    "fullsend.app.action.agent.work",
    "fullsend.app.watch",
    "fullsend.adapters.github",
    "fullsend.adapters.runtimes",
    "fullsend.settings",
    "fullsend.harness",
    "pydantic",
    "pydantic_settings",
    "requests",
    "jinja2",
    "yaml",
)

#: What deciding a skip on the forge (and writing its outputs) never imports: the lifecycle past
#: the pre-flight and what only a run that works needs (docs/architecture.md "Fast skip").  The
#: inputs are read by the one input table (pydantic-settings) and the answers checked by the one
#: checker (pydantic), as on the working path.
NOT_ON_THE_FAST_SKIP = (
    "requests",
    "yaml",
    "fullsend.ports",
    "fullsend.app.action.lifecycle",
)


def _under(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def _skip_run(tmp_path: Path, head_reviewed: bool = False, signed: bool = False) -> tuple[dict[str, str], list[dict]]:
    hook_dir, log = tmp_path / "hook", tmp_path / "modules.jsonl"
    hook_dir.mkdir()
    (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        if head_reviewed:  # the review App reviewed the head after this run was created
            sim.add_review(fix.pr, fix.role_login, "COMMENTED", submitted_at="2026-09-03T10:00:01Z")
            event = {"action": "synchronize", "pull_request": {"number": fix.pr}}
            env = runner_env(tmp_path, sim, fix, event=event)
            env["GITHUB_EVENT_NAME"] = "pull_request"
        elif signed:  # issue 45: the proof is read beside the receipt query (docs/architecture.md "Fast skip")
            add_follow_up_run(sim, run_id=QUEUED_RUN_ID)
            sim.add_comment(fix.pr, genuine_receipt(sim, [QUEUED_RUN_ID], fix.head), fix.job_login)
            env = runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN_ID)
        else:  # the unsigned form, which the fast skip decides (allow_unsigned_receipts)
            sim.add_comment(fix.pr, receipt_body([QUEUED_RUN_ID], fix.head), fix.job_login)
            env = runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN_ID, inputs={"allow_unsigned_receipts": "true"})
        env.update({"PYTHONPATH": str(hook_dir), "FULLSEND_TEST_MODULES_LOG": str(log)})
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    return run.outputs, [json.loads(line) for line in log.read_text().splitlines()]


def test_the_skip_reexecutes_before_the_app_and_never_loads_the_agent_side(tmp_path):
    outputs, records = _skip_run(tmp_path)
    assert outputs["outcome"] == "skipped" and outputs["skip_reason"] == "receipt"
    assert [r["stage"] for r in records] == ["re-exec", "exit"]
    first, final = records
    assert _under(first["modules"], NOT_BEFORE_THE_REEXEC) == []
    assert "fullsend.adapters.secrets" in first["modules"]
    assert _under(final["modules"], NOT_ON_THE_SKIP_PATH) == []
    assert final["sanitizer_tables"] is False
    # The skip is decided on the real forge, the inputs read by the one input table and the answers
    # checked by the one checker (docs/architecture.md "Fast skip"); its summary through the one renderer.
    assert {"fullsend.app.action.skip.fastskip", "fullsend.adapters.github.forge", "fullsend.settings"} <= set(
        final["modules"]
    )
    assert {"urllib3", "pydantic", "pydantic_settings", "jinja2"} <= {m.split(".")[0] for m in final["modules"]}
    assert _under(final["modules"], NOT_ON_THE_FAST_SKIP) == []


def test_a_signed_receipt_skip_reads_its_proof_on_the_forge_and_loads_no_validation_library(tmp_path):
    """Issue 45: the signed receipt's proof (the issuer's keys, this run's record) is read beside
    the receipt query and checked on the standard library (RS256 in core): the skip still loads
    nothing of the agent side and no validation or template library."""
    outputs, records = _skip_run(tmp_path, signed=True)
    assert outputs["outcome"] == "skipped" and outputs["skip_reason"] == "receipt"
    first, final = records
    assert _under(first["modules"], NOT_BEFORE_THE_REEXEC) == []
    assert {"fullsend.app.action.skip.receipt_proof", "fullsend.core.receipt.proof.rs256"} <= set(final["modules"])
    assert _under(final["modules"], NOT_ON_THE_FAST_SKIP + NOT_ON_THE_SKIP_PATH) == []


def test_the_head_reviewed_skip_is_decided_on_the_forge_too(tmp_path):
    outputs, records = _skip_run(tmp_path, head_reviewed=True)
    assert outputs["outcome"] == "skipped" and outputs["skip_reason"] == "head-reviewed"
    final = records[-1]
    assert "fullsend.adapters.github.forge" in final["modules"]
    assert _under(final["modules"], NOT_ON_THE_FAST_SKIP + NOT_ON_THE_SKIP_PATH) == []


def test_the_scripted_agents_version_answer_needs_no_third_party_library() -> None:
    """A child uid runs the scripted agent's ``--version`` with the system's bare interpreter (the
    hostile-agent suite): the runtimes' pinned versions must load without jinja2, pydantic or requests."""
    code = (
        "import sys\n"
        "for name in ('jinja2', 'pydantic', 'requests', 'yaml'):\n"
        "    sys.modules[name] = None\n"
        "from fullsend.simulator.agent.main import main\n"
        "sys.argv = ['agent', '--version']\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith("(Claude Code)")
