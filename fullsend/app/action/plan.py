"""Everything resolved before the first API call (docs/architecture.md "Inputs and settings").

``build_plan`` turns inputs, the GitHub context and the harness into a frozen ``RunPlan`` or
raises ``InputError`` / ``ConfigError`` (exit 2).  Nothing here touches the network.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from fullsend.adapters.agentcli.lock import installable
from fullsend.context import GitHubContext, api_url_problem, head_sha_from_event, item_from_event
from fullsend.core.model import Repo
from fullsend.core.receipt.skips import review_bot_logins as review_logins
from fullsend.core.tokens.policy import ROLE_ALIASES
from fullsend.errors import ConfigError, InputError
from fullsend.harness import Harness, SteerBlock, load_harness, with_overrides
from fullsend.settings import Inputs

DEFAULT_CLIS = {"claude": "claude", "pi": "pi", "codex": "codex"}


@dataclass(frozen=True)
class RunPlan:
    """The run as configured: who, what, where, and how to steer.  Tokens are not held here."""

    inputs: Inputs
    ctx: GitHubContext
    repo: Repo
    item: int
    prompt: str
    agent_cli: str
    harness: Harness
    steer: SteerBlock
    role: str
    env_head_sha: str
    review_bot_logins: tuple[str, ...]
    openshell_cli: str = "openshell"
    #: Where the runtime's CLI is installed after the pre-flight when ``agent_cli`` is "" (the
    #: image's ``FULLSEND_AGENT_CLI_ROOT``; docs/architecture.md "Agent CLI").
    agent_cli_root: str = ""

    @property
    def timeout_s(self) -> float:
        return float(self.inputs.timeout_minutes * 60)

    @property
    def pre_script(self) -> str:
        return self.inputs.pre_script or self.harness.pre_script

    @property
    def post_script(self) -> str:
        return self.inputs.post_script or self.harness.post_script

    @property
    def run_name(self) -> str:
        """``owner/repo#N`` (WIRE run-name half, docs/architecture.md "Binding")."""
        return f"{self.repo.full_name}#{self.item}"


def build_plan(inputs: Inputs, ctx: GitHubContext, agent_cli_root: str = "") -> RunPlan:
    """Resolve and validate the whole configuration.  Raises ``InputError`` / ``ConfigError``.

    ``agent_cli_root``: where this image installs a missing agent CLI after the pre-flight
    (``FULLSEND_AGENT_CLI_ROOT``); "" means a CLI must be on ``PATH`` or named by ``agent_cli``.
    The plan's ``agent_cli`` is "" exactly when the CLI is to be installed there.
    """
    for url, name in ((ctx.api_url, "GITHUB_API_URL"), (ctx.graphql_url, "GITHUB_GRAPHQL_URL")):
        problem = api_url_problem(url, name)
        if problem:
            raise ConfigError(problem)
    repo = Repo.parse(ctx.repository)
    if repo is None:
        raise ConfigError(
            f"GITHUB_REPOSITORY {ctx.repository!r} is not in owner/repo form; run the action inside a "
            "GitHub workflow job, or set GITHUB_REPOSITORY=owner/repo"
        )
    harness = _harness(inputs, ctx.workspace)
    item = inputs.item or item_from_event(ctx.event)
    if item <= 0:
        raise InputError(
            "item",
            "is empty and the event names no issue or pull request",
            "Set 'item' to the issue or pull request number.",
        )
    steer = with_overrides(harness.steer, inputs.steer_enabled, inputs.max_steers, inputs.poll_interval_seconds)
    role = inputs.role or harness.role
    return RunPlan(
        inputs=inputs,
        ctx=ctx,
        repo=repo,
        item=item,
        prompt=_prompt(inputs, harness, ctx.workspace),
        agent_cli=_agent_cli(inputs, ctx.workspace, agent_cli_root),
        harness=harness,
        steer=steer,
        role=ROLE_ALIASES.get(role, role),
        env_head_sha=head_sha_from_event(ctx.event),
        review_bot_logins=review_logins(inputs.review_bot_logins, repo.owner),
        openshell_cli=_openshell_cli(inputs, ctx.workspace),
        agent_cli_root=agent_cli_root,
    )


def _harness(inputs: Inputs, workspace: Path) -> Harness:
    if not inputs.harness:
        return Harness()
    try:
        return load_harness(_inside(workspace, inputs.harness, "harness"))
    except ConfigError as exc:
        raise InputError("harness", str(exc), "Point 'harness' at a readable harness YAML in the workspace.") from None


def _prompt(inputs: Inputs, harness: Harness, workspace: Path) -> str:
    fix = "Set exactly one of 'prompt' or 'prompt_file' (or a harness with a 'prompt:' key)."
    if inputs.prompt and inputs.prompt_file:
        raise InputError("prompt", "both 'prompt' and 'prompt_file' are set", fix)
    if inputs.prompt_file:
        text = _read_prompt_file(workspace, inputs.prompt_file).strip()
        if not text:
            raise InputError("prompt_file", f"{inputs.prompt_file!r} is an empty file", fix)
        return text
    text = inputs.prompt or harness.prompt
    if not text:
        raise InputError("prompt", "no prompt is given", fix)
    return text


def _read_prompt_file(workspace: Path, relative: str) -> str:
    """The text of ``prompt_file`` (relative to the workspace).  Raises ``InputError`` naming the
    path as given, the path read and why it could not be read."""
    path = _inside(workspace, relative, "prompt_file")
    fix = "Point 'prompt_file' at a readable UTF-8 file, relative to the workspace (GITHUB_WORKSPACE)."
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise InputError("prompt_file", f"{relative!r} cannot be read as {path} ({why})", fix) from None
    except UnicodeDecodeError:
        raise InputError("prompt_file", f"{relative!r} ({path}) is not UTF-8 text", fix) from None


def _agent_cli(inputs: Inputs, workspace: Path, install_root: str) -> str:
    name = inputs.agent_cli or DEFAULT_CLIS[inputs.runtime]
    fix = "Set 'agent_cli' to an executable path or a command on PATH, or install the runtime's CLI."
    if "/" in name:
        path = Path(name) if Path(name).is_absolute() else workspace / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise InputError("agent_cli", f"{name!r} ({path}) is not an executable file", fix)
    found = shutil.which(name)
    if not found and not inputs.agent_cli and installable(inputs.runtime, install_root):
        return ""  # the image installs it once the pre-flight decided to run
    if not found:
        raise InputError("agent_cli", f"the command '{name}' is not on PATH", fix)
    return found


def _openshell_cli(inputs: Inputs, workspace: Path) -> str:
    """The ``openshell`` CLI for ``sandbox: openshell``; "" for the local sandbox."""
    if inputs.sandbox != "openshell":
        return ""
    name = inputs.openshell_cli or "openshell"
    if "/" in name:
        path = Path(name) if Path(name).is_absolute() else workspace / name
        found = str(path) if path.is_file() and os.access(path, os.X_OK) else ""
    else:
        found = shutil.which(name) or ""
    if not found:
        raise InputError(
            "sandbox",
            "is 'openshell' but the openshell CLI cannot be found",
            "Install the openshell CLI in the image or name it with 'openshell_cli', or use sandbox: local.",
        )
    return found


def _inside(workspace: Path, relative: str, input_name: str) -> Path:
    path = (workspace / relative).resolve()
    if not path.is_relative_to(workspace.resolve()):
        raise InputError(
            input_name,
            f"{relative!r} points outside the workspace {workspace}",
            f"Give '{input_name}' as a path inside GITHUB_WORKSPACE.",
        )
    return path
