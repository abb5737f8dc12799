"""Model-provider credentials per runtime (docs/architecture.md "Tokens").

Each runtime's agent receives the credential variables its CLI reads and no other runtime's;
a credentials file handed over by path (``GOOGLE_APPLICATION_CREDENTIALS``) is mapped from the
runner's host path to the container's and refused when it holds a runner secret by value (the
Workload Identity file of google-github-actions/auth embeds ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``).

Pure: the caller passes the environment, the file texts and the secrets in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

#: Bedrock through short-lived keys (aws-actions/configure-aws-credentials with role-to-assume).
_AWS_KEYS = frozenset({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"})
#: Application Default Credentials by file (google-github-actions/auth sets all three to one path).
CREDENTIAL_FILE_KEYS = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
    "GOOGLE_GHA_CREDS_PATH",
)

#: The secret credential variables each runtime's CLI reads (config such as ``AWS_REGION`` or
#: ``CLOUD_ML_REGION`` is not listed: it passes like any other variable).
RUNTIME_CREDENTIAL_KEYS: Mapping[str, frozenset[str]] = {
    "claude": frozenset(
        {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", *_AWS_KEYS, *CREDENTIAL_FILE_KEYS}
    ),
    "codex": frozenset({"OPENAI_API_KEY", "CODEX_API_KEY"}),
    # pi-ai's getEnvApiKey (packages/ai/src/env-api-keys.ts) and its Bedrock/Vertex paths.
    "pi": frozenset(
        {
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
            *_AWS_KEYS,
            *CREDENTIAL_FILE_KEYS,
        }
    ),
}
ALL_CREDENTIAL_KEYS = frozenset().union(*RUNTIME_CREDENTIAL_KEYS.values())

#: Where the runner mounts its host directories in a container action's container.
CONTAINER_MOUNTS = (
    ("_github_home", "/github/home"),
    ("_github_workflow", "/github/workflow"),
    ("_runner_file_commands", "/github/file_commands"),
)
CONTAINER_WORKSPACE = "/github/workspace"


def runtime_provider_env(base: Mapping[str, str], runtime: str) -> dict[str, str]:
    """``base`` without the credential variables of the runtimes other than ``runtime``.

    ``runtime`` is one of ``RUNTIME_CREDENTIAL_KEYS``; an unknown one keeps no credential at all.
    """
    own = RUNTIME_CREDENTIAL_KEYS.get(runtime, frozenset())
    return {k: v for k, v in base.items() if k not in ALL_CREDENTIAL_KEYS or k in own}


def container_path(host_path: str, runner_temp: str, host_workspace: str) -> str:
    """The container's path for a runner host path (``docker run -v`` of a container action).

    ``runner_temp`` is the host ``RUNNER_TEMP`` and ``host_workspace`` the host workspace
    (``RUNNER_WORKSPACE/<repo>``); either may be "".  A path under neither is returned as is.
    """
    prefixes = [(f"{runner_temp.rstrip('/')}/{name}", target) for name, target in CONTAINER_MOUNTS if runner_temp]
    if host_workspace:
        prefixes.append((host_workspace.rstrip("/"), CONTAINER_WORKSPACE))
    for prefix, target in prefixes:
        if host_path == prefix or host_path.startswith(prefix + "/"):
            return target + host_path[len(prefix) :]
    return host_path


def host_workspace(runner_workspace: str, repository: str) -> str:
    """The runner's host workspace, ``<RUNNER_WORKSPACE>/<repo name>``, or "" when unknown."""
    name = repository.rpartition("/")[2]
    return f"{runner_workspace.rstrip('/')}/{name}" if runner_workspace and name else ""


def credential_files(
    env: Mapping[str, str],
    secrets: Iterable[str],
    read: Callable[[str], str | None],
    map_path: Callable[[str], str],
) -> tuple[dict[str, str], list[str]]:
    """Map the credential-file variables of ``env`` to container paths and refuse unsafe files.

    ``read(path)`` returns a file's text or ``None`` (unreadable); ``map_path`` maps a host path.
    Returns (the new values by key, with ``""`` meaning "drop it"; the refusal reasons, one per
    dropped key).  A file containing any of ``secrets`` (empty ones ignored) is dropped.
    """
    secrets = [s for s in secrets if s]
    out: dict[str, str] = {}
    reasons: list[str] = []
    for key in CREDENTIAL_FILE_KEYS:
        if not env.get(key):
            continue
        path = map_path(env[key])
        text = read(path)
        if text is not None and any(s in text for s in secrets):
            out[key] = ""
            reasons.append(
                f"{key} names a credentials file that embeds a runner token (such as the OIDC request "
                "token); it is not handed to the agent"
            )
            continue
        out[key] = path
    return out, reasons
