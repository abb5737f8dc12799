"""Normalised agent events and the NDJSON line reader (docs/architecture.md "Delivery").

Every runtime parser turns its CLI's stdout into these events; the live-run driver reacts to
them.  ``iter_json_lines`` is the one stdout reader: it splits on ``b"\\n"`` only (never on
U+2028/U+2029, which ``str.splitlines`` would), strips a trailing ``\\r``, skips lines longer
than 1 MiB (``STREAM_LINE_MAX_BYTES``) and skips lines that are not a JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from fullsend.core.agent_end import EndVerdict
from fullsend.core.final_word import ToolDenial

STREAM_LINE_MAX_BYTES = 1 << 20

#: ``UserReplayEvent.disposition`` values (pi rpc ``data.disposition``).
DELIVERED = "delivered"  # the line reached the model: an ack
QUEUED = "queued"  # accepted and waiting in the CLI's queue: not yet an ack
REJECTED = "rejected"  # refused or consumed elsewhere: never an ack


@dataclass(frozen=True)
class UserReplayEvent:
    """The runtime consumed a line from its input, or reported what it did with one.

    Identity is ``id`` (pi rpc id) or ``content`` (the message text); ``parts`` are the texts of
    a replay's text blocks, each of which may carry a queued message of its own (Claude folds
    several queued messages into one replay).  ``disposition`` is :data:`DELIVERED`,
    :data:`QUEUED` or :data:`REJECTED`.
    """

    at: datetime
    id: str = ""
    content: str = ""
    disposition: str = DELIVERED
    parts: tuple[str, ...] = ()

    @property
    def rejected(self) -> bool:
        """True when the CLI refused the line (pi ``success:false``) or consumed it elsewhere."""
        return self.disposition == REJECTED


@dataclass(frozen=True)
class ResultEvent:
    """A turn end.  Token fields are as the CLI reported them (per turn for Claude).

    ``verdict`` is the turn's class from the runtime's terminal-state table; ``is_error`` is
    True exactly when that class is not outright success.  ``final_message`` is the agent's last
    answer of the turn as the CLI wrote it ("" when it gave none); ``denials`` the tool calls its
    permission rules refused (Claude Code's ``permission_denials``).
    """

    num_turns: int = 0
    total_cost_usd: float = 0.0
    is_error: bool = False
    error_message: str = ""
    subtype: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    verdict: EndVerdict | None = None  # how the turn ended (the runtime's table); None: unclassified
    final_message: str = ""
    denials: tuple[ToolDenial, ...] = ()


@dataclass(frozen=True)
class TokensEvent:
    """A throttled, cumulative token snapshot taken mid-stream."""

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True)
class InitEvent:
    """Session start: the model, CLI version and session (or thread) id."""

    model: str = ""
    version: str = ""
    session_id: str = ""


@dataclass(frozen=True)
class TextEvent:
    """A line of agent output worth showing (assistant text, a tool call)."""

    text: str


@dataclass(frozen=True)
class SendEvent:
    """A line the protocol owes the agent now (codex app-server: the opening ``turn/start`` once the
    thread exists, a retried input, the answer to a server request); the driver appends it to the
    agent's input as it is.  When ``required`` and the write fails, the run cannot go on: the
    driver stops the agent and the iteration fails as one that could not start."""

    line: str
    required: bool = False


@dataclass(frozen=True)
class TurnOpenEvent:
    """The CLI started a turn (codex app-server ``turn/started``), whoever asked for it: until its end
    the feed stays open, and EOF before it is an interrupted turn."""


@dataclass(frozen=True)
class HoldEvent:
    """Whether work the agent delegated is still running that ends when the agent's input closes
    (Codex app-server: a sub-agent thread, which dies with the server at EOF): while ``held``, the
    feed does not close, for at most the run's delegated wait (``AgentParams.delegated_wait_s``)."""

    held: bool


@dataclass(frozen=True)
class RefusalEvent:
    """Tool calls the CLI refused, read from the tool results it wrote (Claude Code: a refusal its
    ``result`` may leave out of ``permission_denials``; docs/rules.md#tool-refused)."""

    denials: tuple[ToolDenial, ...]


@dataclass(frozen=True)
class FaultEvent:
    """An end the action found itself (``verdict``, never a success: delegated work unfinished, a
    turn left unjudged …): it decides the iteration like a turn end that was not success, without
    being a turn end (no turn-end callback, the feed unchanged)."""

    verdict: EndVerdict


@dataclass(frozen=True)
class NoticeEvent:
    """Something the run's log should say about the agent, not the agent's own output (a
    background shell the CLI stopped at its end)."""

    text: str


AgentEvent = (
    UserReplayEvent
    | ResultEvent
    | TokensEvent
    | InitEvent
    | TextEvent
    | SendEvent
    | TurnOpenEvent
    | HoldEvent
    | RefusalEvent
    | FaultEvent
    | NoticeEvent
)


def iter_json_lines(
    stream: IO[bytes], max_line_bytes: int = STREAM_LINE_MAX_BYTES, on_unreadable: Callable[[str], None] | None = None
) -> Iterator[dict[str, Any]]:
    """Yield each JSON object line of a binary ``stream`` until EOF (see module docstring).

    A line that may have carried an event but cannot be read — longer than ``max_line_bytes``, or
    opening with ``{`` and not parsing as a JSON object — is skipped and reported to
    ``on_unreadable`` with why (a turn end inside it would go unjudged).  Blank lines and plain
    text are skipped silently.
    """
    skipping = False
    while True:
        raw = stream.readline(max_line_bytes + 1)
        if not raw:
            return
        complete = raw.endswith(b"\n")
        if skipping:
            skipping = not complete
            continue
        if not complete and len(raw) > max_line_bytes:
            skipping = True
            _report(on_unreadable, f"an output line longer than {max_line_bytes} bytes")
            continue
        obj = _decode_line(raw)
        if obj is not None:
            yield obj
        elif raw.lstrip().startswith(b"{"):
            _report(on_unreadable, "an output line that opens like a JSON object and does not parse as one")


def _report(on_unreadable: Callable[[str], None] | None, why: str) -> None:
    if on_unreadable is not None:
        on_unreadable(why)


def _decode_line(raw: bytes) -> dict[str, Any] | None:
    line = raw.rstrip(b"\n")
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line.strip():
        return None
    try:
        obj = json.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def as_int(value: object) -> int:
    """A JSON integer (not bool) or 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_float(value: object) -> float:
    """A JSON number (not bool) or 0.0."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def as_str(value: object) -> str:
    """A JSON string or ""."""
    return value if isinstance(value, str) else ""
