"""The agent's model-provider credentials (docs/architecture.md "Tokens"): the runtime's own
credential variables, credential files mapped into the container, and runner secrets refused
wherever they appear by value."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fullsend.core.tokens.providers import (
    ALL_CREDENTIAL_KEYS,
    CREDENTIAL_FILE_KEYS,
    container_path,
    credential_files,
    host_workspace,
    runtime_provider_env,
)
from fullsend.ports import Log

#: Runner secrets that must not reach the agent under any name or inside a file it is handed.
RUNNER_SECRET_KEYS = ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RUNTIME_TOKEN")


def runner_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the runner's own secrets in ``environ`` (empty ones left out)."""
    return tuple(v for v in (environ.get(k, "") for k in RUNNER_SECRET_KEYS) if v)


def credential_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The model-provider credentials in ``env`` (values of the credential variables; the
    variables naming credential files hold paths, not secrets, and are left out)."""
    return tuple(v for k, v in env.items() if k in ALL_CREDENTIAL_KEYS and k not in CREDENTIAL_FILE_KEYS and v)


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def agent_provider_env(
    env: Mapping[str, str], runtime: str, environ: Mapping[str, str], secrets: tuple[str, ...], log: Log
) -> dict[str, str]:
    """``env`` (the scrubbed child env) as the agent of ``runtime`` gets it.

    Other runtimes' credential variables are dropped; ``GOOGLE_APPLICATION_CREDENTIALS`` and its
    siblings are mapped from the runner's host path to the container's, and dropped with one
    warning each when the file holds any of ``secrets`` (the job, role or runner tokens).
    """
    out = runtime_provider_env(env, runtime)
    workspace = host_workspace(environ.get("RUNNER_WORKSPACE", ""), environ.get("GITHUB_REPOSITORY", ""))
    runner_temp = environ.get("RUNNER_TEMP", "")

    def map_path(path: str) -> str:
        return container_path(path, runner_temp, workspace)

    files, reasons = credential_files(out, secrets, _read_text, map_path)
    for key, value in files.items():
        if value:
            out[key] = value
        else:
            out.pop(key, None)
    for reason in reasons:
        log("warning", reason)
    return out
