"""Tool calls Claude Code refused, from the tool results it writes (docs/rules.md#tool-refused).

A ``result``'s ``permission_denials`` misses some refusals (a ``Read`` a path rule refused, a
call to a tool ``--disallowedTools`` removed), so the parser also reads each ``user`` line's
``tool_result`` blocks: a block with ``is_error: true`` is a refusal when the CLI says so in the
line's ``tool_result_meta`` entry for that call (WIRE: ``{"id", "non_execution_kind",
"permission_decision": {"decision"}}``; a kind of :data:`REFUSAL_KINDS` or the decision
``reject``), or, on lines without that entry, when its text is one of the CLI's own refusal
sentences (:data:`REFUSAL_SENTENCES`).  The call's name and input come from the ``tool_use``
block with the same id, which an earlier ``assistant`` line carried.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fullsend.adapters.runtimes.events import as_str
from fullsend.core.final_word import ToolDenial, tool_input_json

#: ``tool_result_meta[].non_execution_kind`` values that say the CLI refused the call.
REFUSAL_KINDS = frozenset(
    {"user-rejected", "permission-rule", "automode-blocked", "automode-unavailable", "automode-parsing-error"}
)
#: The CLI's refusal sentences (2.1.x), for a ``tool_result`` without a ``tool_result_meta`` entry.
REFUSAL_SENTENCES = re.compile(
    r"Permission to .{0,400} has been denied"
    r"|Claude requested permissions to .{0,400} but you haven't granted it yet"
    r"|No such tool available: \S+\. \S+ is disabled for this session",
    re.DOTALL,
)


class ToolCalls:
    """The ``tool_use`` blocks seen so far, by id: ``(name, input as compact JSON)``."""

    def __init__(self) -> None:
        self._calls: dict[str, tuple[str, str]] = {}

    def note_assistant(self, message: object) -> None:
        """Remember the tool calls of one assistant ``message`` (the main thread's or a sub-agent's)."""
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and as_str(block.get("id")):
                self._calls[block["id"]] = (as_str(block.get("name")), tool_input_json(block.get("input")))

    def refusals(self, obj: dict[str, Any]) -> list[ToolDenial]:
        """The refused calls among the ``tool_result`` blocks of one ``user`` line (see the module
        docstring); a refused call whose ``tool_use`` was never seen is named ``?``."""
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        meta = _meta_by_id(obj.get("tool_result_meta"))
        found = []
        for block in content if isinstance(content, list) else []:
            if not (isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is True):
                continue
            call_id = as_str(block.get("tool_use_id"))
            entry = meta.get(call_id)
            refused = _meta_refuses(entry) if entry is not None else _text_refuses(block.get("content"))
            if refused:
                name, tool_input = self._calls.get(call_id, ("?", ""))
                found.append(ToolDenial(name, call_id, tool_input))
        return found


def _meta_by_id(value: object) -> dict[str, dict[str, Any]]:
    items = value if isinstance(value, list) else []
    return {as_str(m.get("id")): m for m in items if isinstance(m, dict) and as_str(m.get("id"))}


def _meta_refuses(entry: dict[str, Any]) -> bool:
    decision = entry.get("permission_decision")
    rejected = isinstance(decision, dict) and decision.get("decision") == "reject"
    return rejected or entry.get("non_execution_kind") in REFUSAL_KINDS


def _text_refuses(content: object) -> bool:
    if isinstance(content, list):
        content = "\n".join(as_str(b.get("text")) for b in content if isinstance(b, dict))
    return isinstance(content, str) and REFUSAL_SENTENCES.search(content) is not None


def tool_input(denial: ToolDenial) -> dict[str, Any]:
    """The refused call's input as an object (``{}`` when it is not a JSON object)."""
    try:
        value = json.loads(denial.tool_input) if denial.tool_input else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
