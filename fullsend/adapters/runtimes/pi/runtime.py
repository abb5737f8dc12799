"""pi as a live runtime (``pi --mode rpc``; docs/architecture.md "pi").

Launch: ``<agent_cli> --mode rpc --session-dir <cfg>/sessions --no-approve --no-extensions
--no-prompt-templates --no-themes [--model M] <extra_args…> --session-id <uuid4>`` (flags WIRE),
stdin fed from ``<root>/pi-config/steer-inbox.ndjson``.  Keys are rpc ids: the opening prompt
and each steer get a fresh uuid4.  A ``response`` with disposition ``started`` acks; ``queued``
waits for the delivery (a user ``message_start`` with the line's text); ``handled`` and
``success:false`` retire the line without a result.  A steer is a ``prompt`` with
``streamingBehavior:"steer"``: mid-cycle it enters the queue pi's ``steer`` command uses, and on
an idle pi it starts a cycle, where the ``steer`` command would strand it in the queue
(docs/runtimes.md "Acknowledgements by identity").

A run whose model chain has more than one model (fallbacks) is declined: the session and its
mailbox are bound to one pi launch, and falling back relaunches pi.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from fullsend.adapters.runtimes.dialect import DialectDefaults
from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT, Now
from fullsend.adapters.runtimes.launch import pi_command
from fullsend.adapters.runtimes.live import LiveRuntime
from fullsend.adapters.runtimes.pi.stream import PI_INCOMPLETE, PiAggregator, PiStreamParser, pi_input_line
from fullsend.core.cli_versions import CliVersions, semver_line
from fullsend.ports import AgentParams

PI_CONFIG_DIR = "pi-config"
PI_FIXED_FLAGS = ("--no-approve", "--no-extensions", "--no-prompt-templates", "--no-themes")
PI_FALLBACK_DECLINE = (
    "pi may fall back to another model on this run, and a steered pi session with its mailbox "
    "belongs to a single launch; updates are left to the queued run"
)


def new_session_id() -> str:
    """A fresh pi session id (uuid4 text)."""
    return str(uuid.uuid4())


def model_chain(params: AgentParams) -> list[str]:
    """The models a run may use, primary first (an empty primary means pi's default)."""
    return [params.model, *params.fallback_models]


def pi_argv(params: AgentParams, cfg_dir: Path, session_id: str) -> list[str]:
    """The pi rpc argv; no prompt text (the opening prompt goes through the mailbox)."""
    argv = [params.agent_cli, "--mode", "rpc", "--session-dir", str(cfg_dir / "sessions"), *PI_FIXED_FLAGS]
    if params.model:
        argv += ["--model", params.model]
    return [*argv, *params.extra_args, "--session-id", session_id]


class PiDialect(DialectDefaults):
    """The pi specifics the live driver needs (``LiveDialect``)."""

    name = "pi"
    config_dir_name = PI_CONFIG_DIR
    incomplete = PI_INCOMPLETE

    def argv(self, params: AgentParams, cfg_dir: Path) -> list[str]:
        return pi_argv(params, cfg_dir, new_session_id())

    def script(self, params: AgentParams) -> str:
        """OpenShell: the pinned rpc launch (a fresh session id makes it steerable)."""
        flags = (["--model", params.model] if params.model else []) + list(params.extra_args)
        return pi_command(flags, new_session_id(), params.prompt, program=params.agent_cli)

    def opening(self, params: AgentParams, parser: object = None) -> tuple[str, str]:
        rpc_id = str(uuid.uuid4())
        return pi_input_line(rpc_id, params.prompt or DEFAULT_AGENT_PROMPT), rpc_id

    def steer_line(self, envelope: str, parser: object = None) -> tuple[str, str]:
        rpc_id = str(uuid.uuid4())
        return pi_input_line(rpc_id, envelope, "steer"), rpc_id

    def new_parser(self, clock: Now) -> PiStreamParser:
        return PiStreamParser(clock, per_prompt=True)

    def new_aggregator(self) -> PiAggregator:
        return PiAggregator()

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Declines a run that can fall back across models (the only decline)."""
        return PI_FALLBACK_DECLINE if len(model_chain(params)) > 1 else None


#: pi versions this runtime supports: the 1.x rpc contract with input dispositions and
#: ``agent_settled`` ``aborted`` (the real-CLI tests ran on 1.6.0).
PI_VERSIONS = CliVersions(
    "pi", "@earendil-works/pi-coding-agent", semver_line(), minimum=(1, 6, 0), below=(1, 7, 0), pinned=(1, 6, 0)
)


class PiRuntime(LiveRuntime):
    """pi runtime (``fullsend.ports.Runtime``, ``SteerDecliner``); parameters as ``LiveRuntime``,
    whose steer gate declines a run with fallback models (``PI_FALLBACK_DECLINE``)."""

    dialect: PiDialect
    dialect_type = PiDialect
    cli_versions = PI_VERSIONS
