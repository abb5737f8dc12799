"""What a live runtime (Claude Code, pi, Codex app-server) must say about its CLI
(docs/architecture.md "Live feed").

``LiveDialect`` is implemented by ``claude.runtime.ClaudeDialect``, ``pi.runtime.PiDialect`` and
``codex.appserver.AppServerDialect``, and driven by ``live.LiveRuntime``.  One parser lives per
run; a dialect whose input lines depend on the session (Codex: the thread and the active turn)
reads it from that parser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from fullsend.adapters.runtimes.events import AgentEvent, ResultEvent, TokensEvent
from fullsend.adapters.runtimes.feed import Now
from fullsend.core.agent_end import TerminalState
from fullsend.core.final_word import ToolDenial
from fullsend.ports import AgentParams

#: ``denials -> the ones no expected_denials pattern covers`` (docs/rules.md#tool-refused).
DenialJudge = Callable[[Sequence[ToolDenial]], tuple[ToolDenial, ...]]


class StreamParser(Protocol):
    """Turns one stdout JSON object into events; ``finish`` gives the events owed at EOF."""

    def parse(self, obj: dict[str, Any]) -> list[AgentEvent]: ...

    def finish(self) -> list[AgentEvent]: ...


class Aggregator(Protocol):
    """Folds turn results and token snapshots into run metrics."""

    turns: int
    cost_usd: float

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...

    def add_result(self, r: ResultEvent) -> None: ...

    def add_tokens(self, t: TokensEvent) -> None: ...


class LiveDialect(Protocol):
    """What differs between the live runtimes (Claude: content keys; pi: rpc-id keys)."""

    name: str
    config_dir_name: str
    incomplete: TerminalState  # the end owed at EOF while an acknowledged message's turn is open

    def argv(self, params: AgentParams, cfg_dir: Path) -> list[str]:
        """The agent argv (no prompt text); ``cfg_dir`` is the runtime's config dir in the sandbox."""
        ...

    def script(self, params: AgentParams) -> str:
        """The pinned OpenShell launch script (``runtimes.commands``; feeder spliced in, no prompt)."""
        ...

    def opening(self, params: AgentParams, parser: Any) -> tuple[str, str]:
        """(mailbox line(s), key) of the opening prompt; ``parser`` is the run's parser."""
        ...

    def steer_line(self, envelope: str, parser: Any) -> tuple[str, str]:
        """(mailbox line, key) of one steer; raises ``NoSteerSession`` when the session cannot take
        one yet."""
        ...

    def new_parser(self, clock: Now) -> StreamParser: ...

    def new_aggregator(self) -> Aggregator: ...

    def prepare(self, sandbox: Any, params: AgentParams) -> str:
        """Set the sandbox up before the launch; a failure's text, or ``""`` (Codex logs in here)."""
        ...

    def steer_written(self, parser: Any, key: str) -> None:
        """A steer line was written to the mailbox under ``key`` (Codex remembers it for the turn)."""
        ...

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Why a run with ``params`` cannot be steered, or ``None`` (pi: options it cannot steer)."""
        ...

    def launch_env(self, params: AgentParams) -> Mapping[str, str]:
        """Variables the launch adds to the agent's environment (Claude Code: its wait for delegated
        work, from ``params.delegated_wait_s``)."""
        ...

    def denial_judge(self, params: AgentParams) -> DenialJudge:
        """How refused calls are matched against ``params.expected_denials``, in the CLI's syntax."""
        ...


class DialectDefaults:
    """The optional parts of ``LiveDialect``, doing nothing: a dialect inherits them and overrides
    what it needs."""

    def prepare(self, sandbox: Any, params: AgentParams) -> str:
        """Nothing to set up: ``""``."""
        del sandbox, params
        return ""

    def steer_written(self, parser: Any, key: str) -> None:
        """Nothing to remember."""
        del parser, key

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Every run can be steered."""
        del params
        return None

    def launch_env(self, params: AgentParams) -> Mapping[str, str]:
        """Nothing to add: ``{}``."""
        del params
        return {}

    def denial_judge(self, params: AgentParams) -> DenialJudge:
        """A pattern covers a refusal when it is the refused tool's name exactly."""
        expected = frozenset(params.expected_denials)
        return lambda denials: tuple(d for d in denials if d.tool_name not in expected)
