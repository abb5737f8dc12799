"""Model-provider credentials per runtime (issue 21 A): what each runtime's agent may hold."""

from __future__ import annotations

from fullsend.core.tokens.policy import DENIED_KEYS
from fullsend.core.tokens.providers import (
    ALL_CREDENTIAL_KEYS,
    container_path,
    credential_files,
    host_workspace,
    runtime_provider_env,
)

EVERY_CREDENTIAL = {key: f"value-of-{key}" for key in ALL_CREDENTIAL_KEYS}
CONFIG = {
    "CLAUDE_CODE_USE_BEDROCK": "1",
    "AWS_REGION": "us-east-1",
    "CLOUD_ML_REGION": "us-east5",
    "ANTHROPIC_VERTEX_PROJECT_ID": "proj",
    "CLAUDE_CODE_USE_VERTEX": "1",
    "PATH": "/usr/bin",
}
PI_KEYS = {
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "AI_GATEWAY_API_KEY",
    "ZAI_API_KEY",
    "MISTRAL_API_KEY",
    "MINIMAX_API_KEY",
    "MINIMAX_CN_API_KEY",
    "HF_TOKEN",
    "OPENCODE_API_KEY",
    "KIMI_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
    "GOOGLE_GHA_CREDS_PATH",
}


def test_claude_gets_anthropic_oauth_bedrock_and_vertex_credentials_only():
    env = runtime_provider_env(EVERY_CREDENTIAL | CONFIG, "claude")
    assert set(env) - set(CONFIG) == {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
        "GOOGLE_GHA_CREDS_PATH",
    }
    assert env["CLAUDE_CODE_USE_BEDROCK"] == "1" and env["ANTHROPIC_VERTEX_PROJECT_ID"] == "proj"


def test_codex_gets_the_openai_and_codex_keys_only():
    env = runtime_provider_env(EVERY_CREDENTIAL | CONFIG, "codex")
    assert set(env) - set(CONFIG) == {"OPENAI_API_KEY", "CODEX_API_KEY"}
    assert env["OPENAI_API_KEY"] == "value-of-OPENAI_API_KEY"


def test_pi_gets_its_provider_keys_only():
    env = runtime_provider_env(EVERY_CREDENTIAL | CONFIG, "pi")
    assert set(env) - set(CONFIG) == PI_KEYS


def test_the_deny_list_keeps_only_the_runner_and_the_mint():
    assert DENIED_KEYS.isdisjoint(ALL_CREDENTIAL_KEYS)
    assert {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_TOKEN"} <= DENIED_KEYS


def test_host_paths_map_to_the_container_mounts(tmp_path):
    work = str(tmp_path / "work")  # the runner's work folder, wherever the runner keeps it
    ws = host_workspace(f"{work}/repo", "org/repo")
    assert ws == f"{work}/repo/repo"
    temp = f"{work}/_temp"
    assert container_path(f"{ws}/gha-creds-1.json", temp, ws) == "/github/workspace/gha-creds-1.json"
    assert container_path(f"{temp}/_github_home/c.json", temp, ws) == "/github/home/c.json"
    assert container_path("/elsewhere/c.json", temp, ws) == "/elsewhere/c.json"
    assert container_path(f"{ws}-other/c.json", temp, ws) == f"{ws}-other/c.json"


def test_a_credentials_file_embedding_a_runner_token_is_refused():
    files = {
        "/github/workspace/wif.json": '{"credential_source": {"headers": {"Authorization": "Bearer oidc-req"}}}',
        "/github/workspace/ok.json": '{"type": "authorized_user"}',
    }
    env = {"GOOGLE_APPLICATION_CREDENTIALS": "/host/ws/wif.json", "GOOGLE_GHA_CREDS_PATH": "/host/ws/ok.json"}
    out, reasons = credential_files(
        env, ("", "oidc-req"), files.get, lambda p: p.replace("/host/ws", "/github/workspace")
    )
    assert out == {"GOOGLE_APPLICATION_CREDENTIALS": "", "GOOGLE_GHA_CREDS_PATH": "/github/workspace/ok.json"}
    assert len(reasons) == 1 and reasons[0].startswith("GOOGLE_APPLICATION_CREDENTIALS names a credentials file")
