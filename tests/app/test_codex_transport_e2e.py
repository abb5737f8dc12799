"""Issue 17 through the whole action (entrypoint subprocess, runner env, GitHub simulator): with
``runtime: codex`` the run picks its transport once, logs it, steers live over the scripted
app-server and receipts what was acknowledged; ``codex_transport`` overrides the choice, and an
impossible ``app-server`` stops the run before the agent starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fullsend.adapters.runtimes.codex.exec.loop import STOPPED_FOR_STEER_NOTE
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"
LIVE_LINE = (
    "Codex transport: app-server (turn/steer into the running turn): Codex 0.171.0 has an app-server "
    "the action supports [codex-transport]"
)


def test_a_codex_run_steers_live_over_the_app_server_and_posts_the_receipt(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        added = {}
        sim.on_request(
            sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
            lambda s: added.setdefault("run", add_comment_follow_up(s, COMMAND)[1]),
        )
        run = run_entrypoint(runner_env(tmp_path, sim, fix, inputs={"runtime": "codex"}), tmp_path)
        receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert run.exit_code == 0, run.stdout + run.stderr
    assert LIVE_LINE in run.stdout.splitlines()
    assert STOPPED_FOR_STEER_NOTE not in run.stdout  # no interrupt: the steer joined the running turn
    steers = [m for m in run.agent_messages if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1 and "please re-check the migration" in steers[0]
    follow_up = added["run"]["id"]
    assert (run.outputs["outcome"], run.outputs["steers"], run.outputs["consumed_run_ids"]) == (
        "succeeded",
        "1",
        str(follow_up),
    )
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == (follow_up,)


def test_codex_transport_exec_keeps_interrupt_and_resume(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(
            tmp_path, sim, fix, inputs={"runtime": "codex", "codex_transport": "exec", "steer_enabled": "false"}
        )
        env["SCRIPTED_AGENT_TURN_S"] = "0.2"
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (
        "Codex transport: exec (interrupt and resume): codex_transport is exec [codex-transport]"
        in run.stdout.splitlines()
    )


def test_an_older_codex_falls_back_to_exec_and_says_why(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"runtime": "codex", "steer_enabled": "false"})
        env.update(SCRIPTED_AGENT_TURN_S="0.2", SCRIPTED_AGENT_VERSION="codex-cli 0.160.0")
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (
        "Codex transport: exec (interrupt and resume): Codex 0.160.0 is outside the app-server range "
        ">= 0.171.0 and < 0.172.0 [codex-transport]"
    ) in run.stdout.splitlines()


def test_app_server_asked_for_on_a_codex_that_cannot_exits_2_before_the_agent_starts(tmp_path):
    log = tmp_path / "agent.log"
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"runtime": "codex", "codex_transport": "app-server"})
        env.update(SCRIPTED_AGENT_VERSION="codex-cli 0.160.0", SCRIPTED_AGENT_LOG=str(log))
        run = run_entrypoint(env, tmp_path)
        posted = [c for c in sim.comments(fix.pr) if c["user"]["login"] in (fix.job_login, fix.role_login)]
    assert run.exit_code == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "codex_transport is app-server, but Codex 0.160.0 is outside" in errors[0]
    assert errors[0].endswith("[codex-transport]")
    assert not log.exists() and posted == []
    assert "Traceback" not in run.stdout + run.stderr
