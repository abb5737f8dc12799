"""The agent's final word and the tools it was refused, as the action shows them
(docs/architecture.md "Final message and denied tools"; docs/rules.md#tool-denied).

Every runtime reports the agent's final answer as plain text (``final_message`` of an iteration's
result) and Claude Code also the tool calls its permission rules refused (:class:`ToolDenial`).
Before any of it leaves the action — the ``final_message`` output, the step summary, the terminal
status comment — it goes through :func:`final_message_value`: every secret the action knows is
replaced with ``***`` first (so no cut can leave half a token), terminal escapes and other control
characters go, links, mentions and tags are made inert (``fullsend.core.text.inert.inert_block``),
and the text is cut on a character boundary to :data:`FINAL_MESSAGE_MAX_BYTES` UTF-8 bytes with a
visible marker.  Pure.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fullsend.core.text.inert import inert, inert_block
from fullsend.core.text.sanitize import runner_safe, sanitize_agent_text

#: The largest ``final_message`` in UTF-8 bytes, marker included (16 KiB: far below GitHub's limits
#: for a step output, the step summary and a comment body of 65 536 characters).
FINAL_MESSAGE_MAX_BYTES = 16 * 1024
#: What replaces every secret the action knows.
MASK = "***"
#: The end of a final message that was cut (``{shown}`` and ``{total}`` are byte counts).
TRUNCATED_MARKER = "\n… [final message truncated: {shown} of {total} bytes shown]"
#: A denied tool's input, as shown: at most this many characters, then ``…``.
DENIAL_INPUT_MAX_CHARS = 200
#: The rule id of a tool call the agent's permission rules refused (docs/rules.md#tool-denied).
RULE_TOOL_DENIED = "tool-denied"
#: The Claude Code option that allows a tool, given as two lines of the ``agent_args`` input.
ALLOW_FLAG = "--allowedTools"

_TOOL_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.:()*-]")


@dataclass(frozen=True)
class ToolDenial:
    """One tool call the agent's CLI refused: Claude Code's ``permission_denials`` item.

    ``tool_name`` (``Bash``, ``Write``, ``mcp__server__tool``), ``tool_use_id`` (the model's call
    id, what tells two refusals apart) and ``tool_input`` (the call's input as compact JSON text).
    ``cli`` is the CLI that refused it (``claude`` or ``codex``): how a tool is allowed is its own.
    """

    tool_name: str
    tool_use_id: str = ""
    tool_input: str = ""
    cli: str = "claude"


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each non-empty value of ``secrets`` replaced by :data:`MASK`, longest first
    (a token inside a longer known form is masked whole)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _strip_controls(text: str) -> str:
    """Terminal escapes and invisible characters removed; other control characters but ``\\n``
    and ``\\t`` become spaces; lone surrogates U+FFFD."""
    text, _findings = sanitize_agent_text(runner_safe(text).replace("\r\n", "\n"))
    return "".join(ch if ch in "\n\t" or unicodedata.category(ch) != "Cc" else " " for ch in text)


def bound_utf8(text: str, max_bytes: int = FINAL_MESSAGE_MAX_BYTES) -> str:
    """``text`` when its UTF-8 form fits in ``max_bytes``; else its longest prefix that fits with
    :data:`TRUNCATED_MARKER` appended (cut between two characters, never inside one).

    Raises ``ValueError`` when ``max_bytes`` cannot hold the marker itself.
    """
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    marker = TRUNCATED_MARKER.format(shown=max_bytes, total=len(data))
    room = max_bytes - len(marker.encode("utf-8"))
    if room < 0:
        raise ValueError(f"max_bytes={max_bytes} cannot hold the truncation marker; give at least {len(marker)}")
    head = data[:room].decode("utf-8", errors="ignore")  # a character cut in two is dropped whole
    shown = len(head.encode("utf-8"))
    return head + TRUNCATED_MARKER.format(shown=shown, total=len(data))


def final_message_value(text: str, secrets: Iterable[str], max_bytes: int = FINAL_MESSAGE_MAX_BYTES) -> str:
    """The agent's final message as the action gives it out: secrets masked, control characters
    gone, inert (its lines kept), trailing white space trimmed, at most ``max_bytes`` UTF-8 bytes.

    ``""`` stays ``""``.  Raises ``ValueError`` as :func:`bound_utf8`.
    """
    safe = inert_block(_strip_controls(mask_secrets(text, secrets))).rstrip()
    return bound_utf8(safe, max_bytes)


def masked_denial(denial: ToolDenial, secrets: Iterable[str]) -> ToolDenial:
    """``denial`` with every secret in its name and input replaced by :data:`MASK`."""
    values = tuple(secrets)
    return ToolDenial(
        mask_secrets(denial.tool_name, values), denial.tool_use_id, mask_secrets(denial.tool_input, values), denial.cli
    )


def distinct_denials(denials: Iterable[ToolDenial]) -> tuple[ToolDenial, ...]:
    """``denials`` in order, each refused call once (by ``tool_use_id``, else by name and input)."""
    seen: set[tuple[str, str]] = set()
    out: list[ToolDenial] = []
    for denial in denials:
        key = ("id", denial.tool_use_id) if denial.tool_use_id else (denial.tool_name, denial.tool_input)
        if key not in seen:
            seen.add(key)
            out.append(denial)
    return tuple(out)


def tool_label(name: str) -> str:
    """A tool name safe inside a code span: characters outside ``[A-Za-z0-9_.:()*-]`` become ``?``."""
    return _TOOL_NAME_UNSAFE.sub("?", name)[:100] or "?"


def denial_input_text(denial: ToolDenial) -> str:
    """The refused call's input, one inert line of at most :data:`DENIAL_INPUT_MAX_CHARS` characters."""
    text = " ".join(_strip_controls(denial.tool_input).split())
    if len(text) > DENIAL_INPUT_MAX_CHARS:
        text = text[:DENIAL_INPUT_MAX_CHARS] + "…"
    return inert(text)


def denial_lines(denials: Sequence[ToolDenial]) -> list[str]:
    """One markdown line per refused call: the tool, its input, and the ``agent_args`` lines that
    would allow the tool (``--allowedTools`` and the tool's name, each on its own line, since a
    ``--disallowedTools`` entry wins over an allowed one, that one must go too)."""
    lines = []
    for denial in denials:
        name = tool_label(denial.tool_name)
        said = denial_input_text(denial)
        lines.append(f"`{name}`" + (f" with input {said}" if said else "") + f" — {allow_hint(denial, code=True)}")
    return lines


def allow_hint(denial: ToolDenial, code: bool = False) -> str:
    """How to allow the refused tool, in its CLI's terms (``code``: names as markdown code spans).

    Claude Code: the two ``agent_args`` lines ``--allowedTools`` and the tool, and out of any
    ``--disallowedTools``; Codex: a line of ``expected_denials`` when the refusal is intended, or
    Codex's own approval and exec-policy settings to let it run.
    """
    name = tool_label(denial.tool_name)
    q = (lambda text: f"`{text}`") if code else (lambda text: text)
    if denial.cli == "codex":
        return f"to expect it, add the line {q(name)} to {q('expected_denials')}; to allow it, let Codex run it " + (
            "(its approval policy and exec-policy rules)"
        )
    return f"to allow it, add the lines {q(ALLOW_FLAG)} and {q(name)} to {q('agent_args')}" + (
        f" (and take it out of any {q('--disallowedTools')} there)" if code else ""
    )


def tool_input_json(value: object) -> str:
    """A tool call's input as compact JSON text (``""`` for a missing input)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
