"""Log Codex in with the run's API key before it starts (docs/runtimes.md "Codex credentials").

Codex 0.171 sends the model key it finds in ``$CODEX_HOME/auth.json``.  ``codex exec`` also
reads ``CODEX_API_KEY`` from its environment, but ``codex app-server`` reads neither it nor
``OPENAI_API_KEY``, and ``codex exec`` ignores ``OPENAI_API_KEY``: a run handed only an
environment key would talk to the model unauthenticated.  So when the agent's environment holds
``CODEX_API_KEY`` or ``OPENAI_API_KEY`` (in that order), the action first runs the CLI's own
``<agent_cli> login --with-api-key`` with the key on stdin (never on argv), in the agent's
environment and sandbox, as the agent's user; it writes ``auth.json`` under the agent's
``CODEX_HOME``, which the agent can read anyway (the key is in its environment).
"""

from __future__ import annotations

import subprocess
from typing import Any

from fullsend.errors import FullsendError
from fullsend.ports import AgentParams, Launch, Sandbox

# (WIRE, Codex CLI) the login that reads an API key from stdin.
LOGIN_ARGS = ("login", "--with-api-key")
KEY_VARIABLES = ("CODEX_API_KEY", "OPENAI_API_KEY")
LOGIN_TIMEOUT_S = 60.0


def api_key_of(env: dict[str, str] | Any) -> str:
    """The key the agent's environment hands Codex: ``CODEX_API_KEY``, else ``OPENAI_API_KEY``, else ""."""
    return next((env[name] for name in KEY_VARIABLES if env.get(name)), "")


def log_in(sandbox: Sandbox, params: AgentParams) -> str:
    """Run ``<agent_cli> login --with-api-key`` in ``sandbox``; returns "" when done or not needed,
    else why it failed (the run cannot reach its model then).  On OpenShell the sandbox image's
    own login is used (the action has no stdin to hand there)."""
    key = api_key_of(params.env)
    if not key or sandbox.kind == "openshell":
        return ""
    try:
        login = Launch((params.agent_cli, *LOGIN_ARGS), params.env, params.workdir, stdin_bytes=(key + "\n").encode())
        process = sandbox.launch(login)
        code = process.wait(timeout_s=LOGIN_TIMEOUT_S)  # it prints two lines: the pipe never fills
    except subprocess.TimeoutExpired:
        return f"codex {' '.join(LOGIN_ARGS)} did not finish within {LOGIN_TIMEOUT_S:g} s"
    except FullsendError as exc:
        return f"codex {' '.join(LOGIN_ARGS)} could not start: {exc}"
    if code != 0:
        return f"codex {' '.join(LOGIN_ARGS)} failed with exit code {code}: {process.stderr_tail()[-300:]}"
    return ""
