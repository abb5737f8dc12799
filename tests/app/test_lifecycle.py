"""Lifecycle paths through the entrypoint (docs/architecture.md "Cancellation", "Exit codes" and
"Receipt writer"): only an outright success that absorbed a run leaves a receipt."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import SIM_ENTRY, parse_outputs, run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _fix(sim):
    return standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))


def _follow_up_on_first_listing(sim):
    sim.on_request(
        sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"), lambda s: add_comment_follow_up(s, COMMAND)
    )


def _job_comments(sim, fix):
    return [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]


def test_pre_script_exit_78_skips_the_run(sim, tmp_path):
    fix = _fix(sim)
    run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"pre_script": "exit 78"}), tmp_path)
    assert run.exit_code == 0, run.stdout
    assert run.outputs["outcome"] == "skipped" and run.outputs["skip_reason"] == "pre-script"
    assert run.agent_messages == []
    assert _job_comments(sim, fix) == []


@pytest.mark.parametrize("role_token", ["given", ""])
def test_the_run_goes_on_from_the_fast_skips_pre_flight_without_a_second_one(sim, tmp_path, role_token):
    """docs/architecture.md "Fast skip": no skip, so the lifecycle goes on with the fast skip's
    plan, tokens and forge: the receipt view is read at most once, and the role token's warning
    (no role token: none is minted for the role) and the pre-flight's line are each logged once,
    before the pre-script ends the run."""
    fix = _fix(sim)
    inputs = {"pre_script": "exit 78", "role": "review", **({"role_token": ""} if not role_token else {})}
    run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs=inputs), tmp_path)
    assert run.exit_code == 0 and run.outputs["skip_reason"] == "pre-script", run.stdout
    views = [r for r in sim.requests if r.path == "/graphql" and "ReceiptView" in r.body.decode()]
    assert len(views) == (1 if role_token else 0)  # no role token, no swap: no receipt to read
    lines = run.stdout.splitlines()
    warning = "::warning::No mint URL is set, so no role token is minted for role review"
    assert lines.count(warning) == (0 if role_token else 1)
    assert len([line for line in lines if line.startswith("Head-reviewed skip not ")]) == 1


def test_a_failing_pre_script_fails_the_run_without_the_agent(sim, tmp_path):
    fix = _fix(sim)
    run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"pre_script": "exit 3"}), tmp_path)
    assert run.exit_code == 1
    assert run.outputs["outcome"] == "failed"
    assert run.agent_messages == []


def test_a_failing_post_script_leaves_no_receipt(sim, tmp_path):
    fix = _fix(sim)
    _follow_up_on_first_listing(sim)
    run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"post_script": "exit 1"}), tmp_path)
    assert run.exit_code == 1
    assert run.outputs["outcome"] == "failed" and run.outputs["receipt_url"] == ""
    assert any(m.startswith("Runner update:") for m in run.agent_messages)  # the steer was delivered…
    assert _job_comments(sim, fix) == []  # …but a failed run claims nothing


def test_an_agent_failure_leaves_no_receipt(sim, tmp_path):
    fix = _fix(sim)
    _follow_up_on_first_listing(sim)
    env = runner_env(tmp_path, sim, fix)
    env["SCRIPTED_AGENT_EXIT_CODE"] = "3"
    run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 1
    assert run.outputs["outcome"] == "failed"
    assert _job_comments(sim, fix) == []


def test_validation_iterations_share_the_steer_cap_and_receipt_only_the_shipped_one(sim, tmp_path):
    fix = _fix(sim)
    _follow_up_on_first_listing(sim)
    marker = tmp_path / "validated-once"
    script = f"test -e {marker} || {{ touch {marker}; echo 'tests fail'; exit 1; }}"
    run = run_entrypoint(
        runner_env(tmp_path, sim, fix, inputs={"validation_script": script, "max_iterations": "2"}), tmp_path
    )
    assert run.exit_code == 0, run.stdout
    assert run.outputs["outcome"] == "succeeded"
    # Iteration 1 absorbed the follow-up but failed validation: iteration 2 shipped and absorbed nothing.
    assert run.outputs["steers"] == "1"
    assert run.outputs["consumed_run_ids"] == ""
    assert _job_comments(sim, fix) == []
    # ... and the summary leaves iteration 1's follow-up to its queued run, not silently dropped.
    follow_ups = [r["id"] for r in sim.runs() if r["id"] != fix.my_run_id]
    assert len(follow_ups) == 1
    assert f"- follow-up run {follow_ups[0]} [no-receipt]" in run.summary.splitlines(), run.summary


def test_a_failed_last_validation_lists_each_absorbed_run_once(sim, tmp_path):
    fix = _fix(sim)
    _follow_up_on_first_listing(sim)
    run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"validation_script": "exit 1"}), tmp_path)
    assert run.exit_code == 1 and run.outputs["outcome"] == "failed"
    (follow_up,) = [r["id"] for r in sim.runs() if r["id"] != fix.my_run_id]
    left = [line for line in run.summary.splitlines() if line.startswith("- follow-up run ")]
    assert left == [f"- follow-up run {follow_up} [no-receipt]"], run.summary


def test_sigterm_settles_stops_the_agent_and_posts_no_receipt(sim, tmp_path):
    """Cancelled mid-steer → exit 1 within 7 s, outcome failed, no receipt, status cancelled."""
    fix = _fix(sim)
    _follow_up_on_first_listing(sim)
    env = runner_env(tmp_path, sim, fix)
    env["SCRIPTED_AGENT_TURN_S"] = "60"
    proc = subprocess.Popen(
        [sys.executable, str(SIM_ENTRY)],
        env=env,
        cwd=env["GITHUB_WORKSPACE"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = tmp_path / "agent.log"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and any(
            json.loads(line)["text"].startswith("Runner update:") for line in log.read_text().splitlines()
        ):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the steer never reached the agent")
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    elapsed = time.monotonic() - sent
    assert proc.returncode == 1, out + err
    assert elapsed < 7.0
    outputs = parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())
    assert outputs["outcome"] == "failed" and outputs["receipt_url"] == ""
    assert _job_comments(sim, fix) == []
    terminal = [c for c in sim.comments(fix.pr) if "status:terminal" in c["body"]]
    assert terminal and "Cancelled" in terminal[-1]["body"]


def test_outside_github_actions_the_run_says_steering_is_off_and_why(sim, tmp_path):
    """Issue 15: ``fullsend run`` at a terminal (``GITHUB_ACTIONS`` unset) runs the agent once and
    says so, with the reason, in plain text; nothing is steered even with a follow-up waiting."""
    fix = _fix(sim)
    _follow_up_on_first_listing(sim)
    env = runner_env(tmp_path, sim, fix)
    env.pop("GITHUB_ACTIONS")
    env["SCRIPTED_AGENT_TURN_S"] = "1"
    run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert (
        "Steering is off: not running in GitHub Actions (GITHUB_ACTIONS is not 'true'), so there is no run of "
        "the shim to watch and no follow-up run whose provenance could be proven; the agent runs once on its "
        "prompt [steering-disabled]"
    ) in lines
    assert lines[-1] == "Outcome: succeeded; steering was off: not running in GitHub Actions"
    # plain text at a terminal: no workflow command but the stop-commands fence kept around the agent's output
    assert not [
        line for line in lines if line.startswith(("::add-mask", "::error", "::warning", "::notice", "::group"))
    ]
    assert run.outputs["steers"] == "0" and _job_comments(sim, fix) == []
