"""Issue 21 C: what the run cost, as outputs and summary rows, from the scripted agent's usage
numbers; a skip's summary names the receipt it rests on."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_a_steered_run_reports_cost_tokens_turns_session_and_model_and_the_skip_names_the_receipt(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        added = {}
        sim.on_request(
            sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
            lambda s: added.setdefault("run", add_comment_follow_up(s, "/fs-review check the docs")[1]),
        )
        first = tmp_path / "first"
        first.mkdir()
        run = run_entrypoint(runner_env(first, sim, fix), first)
        assert run.exit_code == 0, run.stdout + run.stderr
        assert run.outputs["steers"] == "1"
        queued = tmp_path / "queued"
        queued.mkdir()
        skip = run_entrypoint(runner_env(queued, sim, fix, run_id=added["run"]["id"]), queued)

    out = run.outputs
    turns = int(out["turns"])
    assert turns in (1, 2)  # the steer absorbed into the running turn, or a turn of its own
    # The scripted agent: 10 input tokens per message consumed (prompt + steer), 5 output tokens
    # and 0.01 USD (cumulative) per turn.
    assert out["input_tokens"] == "20"
    assert out["output_tokens"] == str(5 * turns)
    assert out["cost_usd"] == f"{0.01 * turns:.6f}"
    assert out["model"] == "scripted-model"
    assert UUID.fullmatch(out["session_id"])
    assert float(out["duration_s"]) > 0
    assert f"| Cost | ${0.01 * turns:.6f} |" in run.summary
    assert f"| Tokens in / out | 20 / {5 * turns} |" in run.summary
    assert f"| Session | `{out['session_id']}` |" in run.summary

    assert skip.exit_code == 0 and skip.outputs["skip_reason"] == "receipt"
    assert {
        k: skip.outputs[k] for k in ("cost_usd", "input_tokens", "output_tokens", "turns", "session_id", "model")
    } == dict.fromkeys(("cost_usd", "input_tokens", "output_tokens", "turns", "session_id", "model"), "")
    assert (
        f"| Skipped because of | the [receipt]({run.outputs['receipt_url']}) of the run that absorbed this update |"
        in skip.summary
    )
    assert "| Cost |" not in skip.summary


def test_a_codex_run_reports_its_thread_as_the_session(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"runtime": "codex", "steer_enabled": "false", "model": "gpt-x"})
        env["SCRIPTED_AGENT_TURN_S"] = "0.2"
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert UUID.fullmatch(run.outputs["session_id"])
    assert run.outputs["model"] == "gpt-x"  # Codex reports no model: the input stands in
    assert run.outputs["turns"] == "1"
    assert run.outputs["output_tokens"] == "10"  # 12 output tokens less 2 of reasoning
