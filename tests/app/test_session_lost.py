"""Issue 5 acceptance, the scripted fault: the local sandbox does not come back after a Codex
interrupt: the sandbox stays in Error (docs/architecture.md "Codex").

The whole action runs through the entrypoint with ``runtime: codex`` and the scripted codex
agent.  A follow-up comment arrives while the first turn is running; the steer interrupts the
turn by stopping and starting the local sandbox, which the test double
(``tests/doubles/error_sandbox.py``, installed in the action's process by a ``sitecustomize`` on
``PYTHONPATH``) sends to ``Error`` 70 ms after the start.  The session is lost: the
run fails with exit 1, nothing is acknowledged, no receipt is posted, and the step summary says
the queued run will redo the update.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.error_sandbox import ARM_ENV, SITECUSTOMIZE
from tests.support.action_run import REPO_ROOT, run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def test_sandbox_lost_after_the_interrupt_fails_the_run_without_receipt(sim, tmp_path):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    resumable = tmp_path / "resumable.flag"  # the first turn wrote its first item: a steer stops it at once
    added: list[object] = []

    def follow_up(s: GitHubSimulator) -> None:
        if not added and resumable.exists():
            added.append(add_comment_follow_up(s, COMMAND))

    listing, item_read = (
        sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
        sim.match("GET", rf"/issues/{fix.pr}$"),
    )
    sim.on_request(lambda r: listing(r) or item_read(r), follow_up, once=False)  # a poll: gated or listing
    env = runner_env(tmp_path, sim, fix, inputs={"runtime": "codex", "codex_transport": "exec"})
    hook_dir = tmp_path / "hook"
    hook_dir.mkdir()
    (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env.update({"PYTHONPATH": f"{hook_dir}:{REPO_ROOT}", ARM_ENV: "1"})
    env["SCRIPTED_AGENT_TURN_S"] = "20"  # the first turn is still running when the steer arrives
    env["SCRIPTED_CODEX_EVENTS_FLAG"] = str(resumable)

    run = run_entrypoint(env, tmp_path)

    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["steers"] == "0"
    assert run.outputs.get("consumed_run_ids", "") == ""
    assert run.outputs.get("receipt_url", "") == ""
    # Only the opening prompt reached the agent: the steer was never resumed into it.
    assert run.agent_messages == ["Review the pull request."]
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] == []
    summary = run.summary.lower()
    assert "| receipt | none |" in summary
    assert "| steers acknowledged | 0 |" in summary
    error_rows = [line for line in summary.splitlines() if line.startswith("| error |")]
    assert len(error_rows) == 1 and "queued run will redo" in error_rows[0] and "lost" in error_rows[0]
    assert "`session-closed`" in summary
    warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning::")]
    assert any("lost" in line and "[session-closed]" in line for line in warnings)
    assert "queued run will redo the work" in run.stdout  # the runtime's own note (vector 100)
    assert "resuming it" not in run.stdout  # a lost session is never announced as resuming
