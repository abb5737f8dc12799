"""Codex's live transport: ``codex app-server`` over stdio (docs/architecture.md "Codex").

Launch: ``<agent_cli> app-server <agent_args…>`` in the workspace, stdin fed from the mailbox
``<root>/codex-config/steer-inbox.ndjson`` like Claude Code and pi.  The mailbox is seeded with
the handshake (``initialize``, ``initialized``, ``thread/start``); the parser sends the opening
``turn/start`` once the thread exists.  Keys are fresh uuid4 ``clientUserMessageId`` values; a
steer is acknowledged when Codex records the ``userMessage`` item carrying that id
(``codex/rpc.py``).  Settling closes the mailbox feeder, and the app-server exits at EOF.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fullsend import __version__
from fullsend.adapters.runtimes.codex.appserver.rpc import handshake_lines
from fullsend.adapters.runtimes.codex.appserver.stream import (
    APP_SERVER_INCOMPLETE,
    AppServerAggregator,
    AppServerParser,
)
from fullsend.adapters.runtimes.codex.login import log_in
from fullsend.adapters.runtimes.codex.refusals import denial_judge
from fullsend.adapters.runtimes.codex.transport import CODEX_VERSIONS
from fullsend.adapters.runtimes.dialect import DenialJudge, DialectDefaults
from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT, Now
from fullsend.adapters.runtimes.launch import codex_app_server_command
from fullsend.adapters.runtimes.live import LiveRuntime, SandboxFactory
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams

CODEX_CONFIG_DIR = "codex-config"
# (WIRE, Codex CLI) the subcommand; stdio is its default transport.
APP_SERVER_ARGS = ("app-server",)
# (WIRE, Codex CLI) last on the command line, after agent_args: Codex's goals start turns of their
# own after a turn completes, which an unattended run would cut off at EOF and report as done.
APP_SERVER_LAST_ARGS = ("--disable", "goals")


def app_server_argv(params: AgentParams) -> list[str]:
    """The app-server argv; no prompt text (the prompt goes through the mailbox)."""
    return [params.agent_cli, *APP_SERVER_ARGS, *params.extra_args, *APP_SERVER_LAST_ARGS]


class AppServerDialect(DialectDefaults):
    """The ``codex app-server`` specifics the live driver needs (``LiveDialect``)."""

    name = "codex"
    config_dir_name = CODEX_CONFIG_DIR
    incomplete = APP_SERVER_INCOMPLETE

    def argv(self, params: AgentParams, cfg_dir: Path) -> list[str]:
        del cfg_dir  # Codex keeps its state under CODEX_HOME
        return app_server_argv(params)

    def script(self, params: AgentParams) -> str:
        """OpenShell: the pinned app-server launch with the mailbox feeder."""
        return codex_app_server_command([*params.extra_args, *APP_SERVER_LAST_ARGS], program=params.agent_cli)

    def opening(self, params: AgentParams, parser: Any) -> tuple[str, str]:
        """The handshake lines; the opening prompt waits in the session for the thread."""
        key = str(uuid.uuid4())
        parser.session.set_opening(key, params.prompt or DEFAULT_AGENT_PROMPT)
        return "\n".join(handshake_lines(params.model, __version__)), key

    def steer_line(self, envelope: str, parser: Any) -> tuple[str, str]:
        key = str(uuid.uuid4())
        return parser.session.steer_line(key, envelope), key

    def prepare(self, sandbox: Any, params: AgentParams) -> str:
        """Before the launch: log Codex in with the run's API key (``codex/login.py``)."""
        return log_in(sandbox, params)

    def steer_written(self, parser: Any, key: str) -> None:
        """The steer line with ``key`` is in the mailbox: only such a line is ever sent again."""
        parser.session.written(key)

    def denial_judge(self, params: AgentParams) -> DenialJudge:
        """``expected_denials`` in Codex's terms (``codex/refusals.py``)."""
        return denial_judge(params.expected_denials)

    def new_parser(self, clock: Now) -> AppServerParser:
        return AppServerParser(clock)

    def new_aggregator(self) -> AppServerAggregator:
        return AppServerAggregator()


class CodexAppServerRuntime(LiveRuntime):
    """Codex over ``codex app-server`` (``fullsend.ports.Runtime``); parameters as ``LiveRuntime``."""

    cli_versions = CODEX_VERSIONS

    def __init__(
        self,
        sandbox_root_parent: Path | None = None,
        clock: Now | None = None,
        render: Callable[[SteerMessage], str] | None = None,
        warn: Callable[[str], None] | None = None,
        sandbox_factory: SandboxFactory | None = None,
    ) -> None:
        super().__init__(AppServerDialect(), sandbox_root_parent, clock, render, warn, sandbox_factory)
