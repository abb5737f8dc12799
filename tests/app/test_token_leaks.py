"""Issue 6 acceptance (leak test; docs/architecture.md "Child isolation"): run the whole action with distinctive token values and
look everywhere a token could escape to."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

RUNNER_SECRETS = {
    "ACTIONS_RUNTIME_TOKEN": "runtime-secret-8f1e2d",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-secret-77aa",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:9/oidc",
}
FORBIDDEN_KEYS = {
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "INPUT_GITHUB_TOKEN",
    "INPUT_ROLE_TOKEN",
    "GH_WORKFLOW_TOKEN",
}


def _dump_script(path: Path) -> str:
    return f'python3 -c \'import json, os; json.dump(dict(os.environ), open("{path}", "w"))\''


def test_the_job_token_reaches_no_child_and_no_output(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.on_request(
            sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
            lambda s: add_comment_follow_up(s, "/fs-review please re-check the migration"),
        )
        dumps = {name: tmp_path / f"{name}.json" for name in ("agent", "pre", "post", "validation")}
        env = runner_env(
            tmp_path,
            sim,
            fix,
            inputs={
                "pre_script": _dump_script(dumps["pre"]),
                "post_script": _dump_script(dumps["post"]),
                "validation_script": _dump_script(dumps["validation"]),
            },
        )
        env.update(RUNNER_SECRETS)
        env.update(
            {
                "SCRIPTED_AGENT_ENV_DUMP": str(dumps["agent"]),
                "SCRIPTED_AGENT_ARGV_DUMP": str(tmp_path / "argv.json"),
                "CALLER_COPY_OF_JOB_TOKEN": fix.job_token,
                "AUTH_HEADER": f"Bearer {fix.job_token}",
                "GH_TOKEN": fix.job_token,
                "GITHUB_TOKEN": fix.job_token,
            }
        )
        run = run_entrypoint(env, tmp_path)
        assert run.exit_code == 0, run.stdout + run.stderr
        assert run.outputs["steers"] == "1"
        comments = json.dumps(sim.comments(fix.pr))

    for name, path in dumps.items():
        child = json.loads(path.read_text())
        assert not [k for k, v in child.items() if fix.job_token in v], name
        assert FORBIDDEN_KEYS.isdisjoint(child), name
        assert [k for k, v in child.items() if fix.role_token in v] == ["GH_TOKEN", "GITHUB_TOKEN"] or sorted(
            k for k, v in child.items() if fix.role_token in v
        ) == ["GH_TOKEN", "GITHUB_TOKEN"], name
        assert child["GH_TOKEN"] == child["GITHUB_TOKEN"] == fix.role_token, name
        assert not [v for v in child.values() if any(s in v for s in RUNNER_SECRETS.values())], name
    agent_env = json.loads(dumps["agent"].read_text())
    assert agent_env.get("IS_SANDBOX") == "1"
    assert {"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"}.isdisjoint(agent_env)
    argv = (tmp_path / "argv.json").read_text()
    for token in (fix.job_token, fix.role_token):
        assert token not in argv
        assert token not in run.summary
        assert token not in json.dumps(run.outputs)
        assert token not in comments
        visible = [line for line in (run.stdout + run.stderr).splitlines() if not line.startswith("::add-mask::")]
        assert not [line for line in visible if token in line]


def test_encoded_copies_of_the_job_token_are_scrubbed_and_a_persisted_checkout_is_flagged(tmp_path):
    import base64

    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp_path, sim, fix, inputs={"steer_enabled": "false"})
        basic = base64.b64encode(f"x-access-token:{fix.job_token}".encode()).decode()
        env.update(
            {
                "SCRIPTED_AGENT_ENV_DUMP": str(tmp_path / "env.json"),
                "SCRIPTED_AGENT_TURN_S": "0.2",
                "CHECKOUT_HEADER": f"AUTHORIZATION: basic {basic}",
                "B64_TOKEN": base64.b64encode(fix.job_token.encode()).decode(),
            }
        )
        git = Path(env["GITHUB_WORKSPACE"]) / ".git"
        git.mkdir()
        (git / "config").write_text(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {basic}\n')
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout
    child = json.loads((tmp_path / "env.json").read_text())
    assert "CHECKOUT_HEADER" not in child and "B64_TOKEN" not in child
    assert any(
        line.startswith("::warning") and "persist-credentials: false" in line for line in run.stdout.splitlines()
    )
