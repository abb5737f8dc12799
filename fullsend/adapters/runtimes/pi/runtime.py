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
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from fullsend.adapters.runtimes.dialect import DialectDefaults
from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT, Now
from fullsend.adapters.runtimes.launch import pi_command
from fullsend.adapters.runtimes.live import LiveRuntime, SandboxFactory
from fullsend.adapters.runtimes.pi.stream import PI_INCOMPLETE, PiAggregator, PiStreamParser, pi_input_line
from fullsend.adapters.runtimes.registry import SessionRegistry
from fullsend.adapters.runtimes.versions import CliVersions, semver_line
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import SteerUnsupported
from fullsend.ports import AckListener, AgentParams, AgentRunResult

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
    """pi runtime (``fullsend.ports.Runtime``, ``SteerDecliner``); parameters as ``LiveRuntime``.

    ``steer_gate`` is the in-run safety net for callers that did not ask
    ``steer_decline_reason`` first: it announces the decline once and makes ``steer`` raise
    ``SteerUnsupported`` (not ``NoSteerSession``) until the run returns.
    """

    dialect: PiDialect
    cli_versions = PI_VERSIONS

    def __init__(
        self,
        sandbox_root_parent: Path | None = None,
        clock: Now | None = None,
        render: Callable[[SteerMessage], str] | None = None,
        warn: Callable[[str], None] | None = None,
        sandbox_factory: SandboxFactory | None = None,
    ) -> None:
        super().__init__(PiDialect(), sandbox_root_parent, clock, render, warn, sandbox_factory)
        self._declines: SessionRegistry[str] = SessionRegistry()

    def steer_gate(self, params: AgentParams) -> bool:
        """True when the run may be steered; a declined steerable run is announced and recorded."""
        if not params.steerable:
            return False
        reason = self.dialect.steer_decline_reason(params)
        if reason is None:
            return True
        self._warn(f"Steering disabled: {reason}")
        self._declines.register(params.sandbox_name, reason)
        return False

    def clear_decline(self, sandbox_name: str) -> None:
        """Forget a recorded decline (done when the run returns)."""
        reason = self._declines.lookup(sandbox_name)
        if reason is not None:
            self._declines.unregister(sandbox_name, reason)

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        """As ``LiveRuntime.steer``; raises ``SteerUnsupported`` for a declined run."""
        reason = self._declines.lookup(sandbox_name)
        if reason is not None:
            raise SteerUnsupported(f"pi cannot take steers on this run: {reason}")
        super().steer(sandbox_name, msg)

    def run(
        self,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None] | None = None,
        on_ack: AckListener | None = None,
    ) -> AgentRunResult:
        """As ``LiveRuntime.run``, after the steer gate; a declined run runs unsteered."""
        if params.steerable and not self.steer_gate(params):
            params = _unsteered(params)
        try:
            return super().run(params, on_turn_end, on_output, on_ack)
        finally:
            self.clear_decline(params.sandbox_name)


def _unsteered(params: AgentParams) -> AgentParams:
    from dataclasses import replace

    return replace(params, steerable=False)
