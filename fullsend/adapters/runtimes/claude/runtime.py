"""Claude Code as a live runtime (docs/architecture.md "Claude Code").

Launch: ``<agent_cli> --print --verbose --output-format stream-json --input-format stream-json
--replay-user-messages [--model M] [--fallback-model F] --dangerously-skip-permissions
<extra_args…>`` (flags WIRE; the bypass is left out when ``extra_args`` sets ``--permission-mode``),
no prompt on argv; stdin is fed from the mailbox
``<root>/claude-config/steer-inbox.ndjson``.  Keys are the message texts themselves: the opening
prompt's key is the prompt, a steer's key is its envelope text, and a replay acks the first
un-acked entry whose key equals its content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from fullsend.adapters.runtimes.claude.metrics import ClaudeSteerAggregator
from fullsend.adapters.runtimes.claude.permission_rules import RuleContext, any_rule_matches
from fullsend.adapters.runtimes.claude.stream import CLAUDE_INCOMPLETE, ClaudeStreamParser, claude_input_line
from fullsend.adapters.runtimes.dialect import DenialJudge, DialectDefaults
from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT, Now
from fullsend.adapters.runtimes.launch import CLAUDE_STREAM_FLAGS, SANDBOX_WORKSPACE, claude_command
from fullsend.adapters.runtimes.live import LiveRuntime, SandboxFactory
from fullsend.adapters.runtimes.versions import CliVersions, semver_line
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams

CLAUDE_CONFIG_DIR = "claude-config"
CLAUDE_SKIP_PERMISSIONS_FLAG = "--dangerously-skip-permissions"
#: A permission mode of the user's own (``agent_args``) replaces the default bypass.
CLAUDE_PERMISSION_FLAGS = ("--permission-mode",)
#: (WIRE, Claude Code CLI) how long print mode waits, once its input closed, for background work
#: before it stops it, in milliseconds (0 waits forever: never sent, see :func:`claude_launch_env`).
CLAUDE_BG_WAIT_ENV = "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"


def claude_launch_env(params: AgentParams) -> dict[str, str]:
    """The wait for delegated work as Claude Code reads it: ``delegated_wait_s`` in whole
    milliseconds, at least 1 (the CLI reads 0 as "wait forever")."""
    return {CLAUDE_BG_WAIT_ENV: str(max(1, int(params.delegated_wait_s * 1000)))}


def claude_argv(params: AgentParams) -> list[str]:
    """The agent argv for ``params`` (data, never a shell string); carries no prompt text."""
    argv = [params.agent_cli, *CLAUDE_STREAM_FLAGS]
    if params.model:
        argv += ["--model", params.model]
    if params.fallback_models:
        argv += ["--fallback-model", params.fallback_models[0]]
    if not any(
        a == CLAUDE_SKIP_PERMISSIONS_FLAG or a.split("=", 1)[0] in CLAUDE_PERMISSION_FLAGS for a in params.extra_args
    ):
        argv.append(CLAUDE_SKIP_PERMISSIONS_FLAG)
    return argv + list(params.extra_args)


class ClaudeDialect(DialectDefaults):
    """The Claude Code specifics the live driver needs (``LiveDialect``)."""

    name = "claude"
    config_dir_name = CLAUDE_CONFIG_DIR
    incomplete = CLAUDE_INCOMPLETE

    def argv(self, params: AgentParams, cfg_dir: Path) -> list[str]:
        del cfg_dir  # Claude keeps its config where its environment says
        return claude_argv(params)

    def script(self, params: AgentParams) -> str:
        """OpenShell: the pinned steerable launch with the same flags as ``claude_argv``."""
        flags = claude_argv(params)[1 + len(CLAUDE_STREAM_FLAGS) :]
        return claude_command(flags, params.prompt, steerable=True, program=params.agent_cli)

    def opening(self, params: AgentParams, parser: object = None) -> tuple[str, str]:
        prompt = params.prompt or DEFAULT_AGENT_PROMPT
        return claude_input_line(prompt), prompt

    def steer_line(self, envelope: str, parser: object = None) -> tuple[str, str]:
        return claude_input_line(envelope), envelope

    def launch_env(self, params: AgentParams) -> Mapping[str, str]:
        return claude_launch_env(params)

    def denial_judge(self, params: AgentParams) -> DenialJudge:
        """``expected_denials`` in Claude Code's permission-rule syntax; relative paths start at the
        workspace as the agent sees it (the local one, or OpenShell's)."""
        where = RuleContext((str(params.workdir), SANDBOX_WORKSPACE), params.env.get("HOME", ""))
        rules = params.expected_denials
        return lambda denials: tuple(d for d in denials if not any_rule_matches(rules, d, where))

    def new_parser(self, clock: Now) -> ClaudeStreamParser:
        return ClaudeStreamParser(clock)

    def new_aggregator(self) -> ClaudeSteerAggregator:
        return ClaudeSteerAggregator()


#: Claude Code versions this runtime supports (the real-CLI tests ran on 2.1.296 and 2.1.332).
CLAUDE_VERSIONS = CliVersions(
    "Claude Code",
    "@anthropic-ai/claude-code",
    semver_line(suffix=r" \(Claude Code\)"),
    minimum=(2, 1, 296),
    below=(2, 2, 0),
    pinned=(2, 1, 332),
)


class ClaudeRuntime(LiveRuntime):
    """Claude Code runtime (``fullsend.ports.Runtime``); see ``LiveRuntime`` for the parameters.

    ``steer_decline_reason(params)`` is always None: every Claude run can be steered.
    """

    cli_versions = CLAUDE_VERSIONS

    def __init__(
        self,
        sandbox_root_parent: Path | None = None,
        clock: Now | None = None,
        render: Callable[[SteerMessage], str] | None = None,
        warn: Callable[[str], None] | None = None,
        sandbox_factory: SandboxFactory | None = None,
    ) -> None:
        super().__init__(ClaudeDialect(), sandbox_root_parent, clock, render, warn, sandbox_factory)
