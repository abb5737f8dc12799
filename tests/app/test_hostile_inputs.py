"""Hostile inputs through the whole action (entrypoint subprocess, GitHub simulator on 127.0.0.1):
a stranger's text that no UTF-8 writer takes never stops the watch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

LISTING = r"/actions/workflows/fullsend\.yml/runs"


def test_a_comment_with_a_lone_surrogate_is_steered_with_a_replacement_not_a_stopped_watch(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        added: dict[str, Any] = {}

        def add(s: GitHubSimulator) -> None:
            if "run" not in added:
                added["run"] = add_comment_follow_up(s, "/fs-review check \ud800 the migration")[1]

        sim.on_request(sim.match("GET", LISTING), add)
        env = runner_env(tmp_path, sim, fix)
        env.update(SCRIPTED_AGENT_TURN_S="4")
        run = run_entrypoint(env, tmp_path)

    assert "Traceback" not in run.stdout + run.stderr
    assert not [line for line in run.stdout.splitlines() if "unexpected error" in line], run.stdout
    steers = [m for m in run.agent_messages if m.startswith(OPENING_LINE)]
    assert len(steers) == 1 and "check \ufffd the migration" in steers[0], run.agent_messages
    assert run.outputs["steers"] == "1" and run.outputs["outcome"] == "succeeded", run.stdout
    assert run.outputs["consumed_run_ids"] == str(added["run"]["id"])


def test_an_unreadable_rate_limit_header_costs_one_poll_not_the_watch(tmp_path):
    """A non-ASCII ``X-RateLimit-Reset`` once raised inside the HTTP library and stopped the
    watch; now the answer is a limit without a readable reset (docs/rules.md#rate-limited: a
    minute's wait) and the next poll still steers the update that arrives after it."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        fault = sim.fail(
            "GET",
            LISTING,
            403,
            times=1,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "17\u00bd0\u00e9"},
            body={"message": "API rate limit exceeded"},
        )
        added: dict[str, Any] = {}

        def add(s: GitHubSimulator) -> None:
            if fault.fired and "run" not in added:
                added["run"] = add_comment_follow_up(s, "/fs-review one more thing")[1]

        sim.on_request(sim.match("GET", LISTING), add)
        env = runner_env(tmp_path, sim, fix)
        env.update(SCRIPTED_AGENT_TURN_S="6")
        run = run_entrypoint(env, tmp_path)

    assert fault.fired == 1
    assert "Traceback" not in run.stdout + run.stderr
    assert not [line for line in run.stdout.splitlines() if "unexpected error" in line], run.stdout
    assert run.outputs["steers"] == "1" and run.outputs["outcome"] == "succeeded", run.stdout
    assert run.outputs["consumed_run_ids"] == str(added["run"]["id"])
