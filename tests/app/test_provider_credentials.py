"""Issue 21 A: per runtime, which model-provider variables reach the agent's environment, with the
whole action run through its entrypoint against the simulator and the scripted agent."""

from __future__ import annotations

import json

import pytest

from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

PROVIDER_ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-test",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-test",
    "CLAUDE_CODE_USE_BEDROCK": "1",
    "AWS_ACCESS_KEY_ID": "ASIATEST",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "AWS_SESSION_TOKEN": "aws-session",
    "AWS_REGION": "us-east-1",
    "CLAUDE_CODE_USE_VERTEX": "1",
    "CLOUD_ML_REGION": "us-east5",
    "ANTHROPIC_VERTEX_PROJECT_ID": "proj",
    "OPENAI_API_KEY": "sk-openai",
    "CODEX_API_KEY": "codex-key",
    "GEMINI_API_KEY": "gemini-key",
    "OPENROUTER_API_KEY": "or-key",
}
CONFIG = {
    "CLAUDE_CODE_USE_BEDROCK",
    "AWS_REGION",
    "CLAUDE_CODE_USE_VERTEX",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
}
EXPECTED = {
    "claude": {
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
    },
    "codex": {"OPENAI_API_KEY", "CODEX_API_KEY"},
    "pi": {
        "ANTHROPIC_API_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
    },
}


@pytest.mark.parametrize("runtime", ["claude", "codex", "pi"])
def test_each_runtime_gets_its_own_provider_credentials_and_no_runner_secret(tmp_path, runtime):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"runtime": runtime, "steer_enabled": "false"})
        creds = tmp_path / "workspace" / "gha-creds-1.json"
        creds.write_text(
            json.dumps({"type": "external_account", "credential_source": {"file": str(tmp_path / "oidc.jwt")}})
        )
        env.update(PROVIDER_ENV)
        env.update(
            {
                "GOOGLE_APPLICATION_CREDENTIALS": str(creds),
                "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-req-secret",
                "ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:9/oidc",
                "COPY_OF_OIDC": "x oidc-req-secret",
                "SCRIPTED_AGENT_ENV_DUMP": str(tmp_path / "env.json"),
                "SCRIPTED_AGENT_TURN_S": "0.2",
            }
        )
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    agent = json.loads((tmp_path / "env.json").read_text())
    offered = set(PROVIDER_ENV) - CONFIG | {"GOOGLE_APPLICATION_CREDENTIALS"}
    assert offered & set(agent) == EXPECTED[runtime]
    assert {k: agent[k] for k in EXPECTED[runtime] - {"GOOGLE_APPLICATION_CREDENTIALS"}} == {
        k: PROVIDER_ENV[k] for k in EXPECTED[runtime] - {"GOOGLE_APPLICATION_CREDENTIALS"}
    }
    assert CONFIG <= set(agent)
    assert not [k for k, v in agent.items() if "oidc-req-secret" in v]
    assert "ACTIONS_ID_TOKEN_REQUEST_URL" not in agent


def test_a_workload_identity_file_embedding_the_oidc_request_token_is_not_handed_over(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"steer_enabled": "false"})
        creds = tmp_path / "workspace" / "gha-creds-2.json"
        creds.write_text(
            json.dumps(
                {
                    "type": "external_account",
                    "credential_source": {
                        "url": "http://127.0.0.1:9/oidc?audience=x",
                        "headers": {"Authorization": "Bearer oidc-req-secret"},
                    },
                }
            )
        )
        env.update(
            {
                "GOOGLE_APPLICATION_CREDENTIALS": str(creds),
                "CLAUDE_CODE_USE_VERTEX": "1",
                "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-req-secret",
                "SCRIPTED_AGENT_ENV_DUMP": str(tmp_path / "env.json"),
                "SCRIPTED_AGENT_TURN_S": "0.2",
            }
        )
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    agent = json.loads((tmp_path / "env.json").read_text())
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in agent
    assert any(
        line.startswith("::warning") and "GOOGLE_APPLICATION_CREDENTIALS names a credentials file" in line
        for line in run.stdout.splitlines()
    )


@pytest.mark.parametrize(
    ("runtime", "agent_args", "expected"),
    [
        (
            "claude",
            "--allowedTools\nRead,Grep\n--max-turns\n7",
            ["--allowedTools", "Read,Grep", "--max-turns", "7", "--dangerously-skip-permissions"],
        ),
        ("claude", "--permission-mode\nacceptEdits", ["--permission-mode", "acceptEdits"]),
        ("codex", "--profile\nci", ["--profile", "ci"]),
        ("pi", "--provider\nopenai", ["--provider", "openai"]),
    ],
)
def test_agent_args_reach_the_cli(tmp_path, runtime, agent_args, expected):
    """Issue 21 B: each line of ``agent_args`` is one argument of the agent's argv."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(
            tmp_path, sim, fix, inputs={"runtime": runtime, "steer_enabled": "false", "agent_args": agent_args}
        )
        env.update({"SCRIPTED_AGENT_ARGV_DUMP": str(tmp_path / "argv.json"), "SCRIPTED_AGENT_TURN_S": "0.2"})
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    argv = json.loads((tmp_path / "argv.json").read_text())
    for arg in expected:
        assert arg in argv
    start = argv.index(expected[0])
    assert argv[start : start + 2] == expected[:2]
    if runtime == "claude" and "--permission-mode" in expected:
        assert "--dangerously-skip-permissions" not in argv
