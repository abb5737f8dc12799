"""One steered run of the whole action on the simulator, and what a run that must not post a
receipt looks like (issue 43's end-to-end cases share them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import StandardScenario, add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import ActionRun, run_entrypoint, runner_env
from tests.support.fault_harness import queued_run_skips

COMMAND = "/fs-review please re-check the migration"
LISTING = r"/actions/workflows/fullsend\.yml/runs"


def run_with_follow_up(
    sim: GitHubSimulator,
    tmp_path: Path,
    inputs: dict[str, str],
    agent_env: dict[str, str],
    after: Path | None = None,
    timeout_s: float = 120,
) -> tuple[StandardScenario, dict[str, Any], ActionRun]:
    """The action with ``inputs`` and the agent's ``agent_env`` (the scripted agent's knobs, or a
    real CLI's environment); one follow-up comment arrives at a poll (once ``after`` exists, when
    given; a poll reads the item, and lists while the listing gate is open); the run is bounded by ``timeout_s``.  Returns (the scenario, the
    follow-up run, the run)."""
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added: dict[str, Any] = {}

    def follow_up(s: GitHubSimulator) -> None:
        if not added and (after is None or after.exists()):
            added["run"] = add_comment_follow_up(s, COMMAND)[1]

    listing, item_read = sim.match("GET", LISTING), sim.match("GET", rf"/issues/{fix.pr}$")
    sim.on_request(lambda r: listing(r) or item_read(r), follow_up, once=False)  # a poll: gated or listing
    env = runner_env(tmp_path, sim, fix, inputs=inputs)
    env.update(agent_env)
    run = run_entrypoint(env, tmp_path, timeout_s=timeout_s)
    assert added, "the follow-up never arrived: " + run.stdout
    return fix, added["run"], run


def assert_no_receipt(
    sim: GitHubSimulator, fix: StandardScenario, follow_up: dict[str, Any], run: ActionRun, tmp_path: Path
) -> None:
    """The run failed (exit 1, ``outcome=failed``), posted no receipt, and the queued run of
    ``follow_up`` does its work instead of skipping."""
    assert run.exit_code == 1, run.stdout + run.stderr
    assert run.outputs["outcome"] == "failed"
    assert run.outputs["consumed_run_ids"] == "" and run.outputs["receipt_url"] == ""
    assert [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login] == []
    assert not queued_run_skips(sim, fix, follow_up["id"], tmp_path), "the queued run must do its work"


def steered(run: ActionRun) -> list[str]:
    """The messages the agent received that carry a steer (the envelope's opening line)."""
    return [m for m in run.agent_messages if m.startswith(OPENING_LINE)]


def errors(run: ActionRun) -> list[str]:
    """The run's ``::error::`` lines."""
    return [line for line in run.stdout.splitlines() if line.startswith("::error")]
