"""Tool calls Codex refused, and the ``expected_denials`` lines that cover them (docs/rules.md#tool-refused;
docs/runtimes.md "Codex").

What the pinned Codex reports of a refusal, on both transports:

* an item whose ``status`` is ``declined`` — a command (app-server ``commandExecution``, exec
  ``command_execution``) or a file change (app-server ``fileChange``; exec writes a declined
  patch as ``failed``, so it cannot be told from a patch that did not apply);
* app-server only: a request the server sends the client — an approval (a command, a file change,
  more permissions), a question for the user, a client-side tool call, an MCP elicitation.  The
  run is unattended and answers every request with an error, which refuses it.

A command Codex's exec policy forbids (``prefix_rule(…, decision="forbidden")``) writes no item
and no request on either transport: the model only reads the rejection in its tool output, so
the action cannot see it.

Refusals are named in Codex's own vocabulary: ``shell`` (a command), ``apply_patch`` (a file
change), ``permissions``, ``request_user_input``, ``mcp__<server>`` (an elicitation), or the name
of a client-side tool.  A line of ``expected_denials`` is such a name, which covers every refusal
of it, or ``shell(<words>)``, which covers a refused command whose words start with ``<words>``
(an exec-policy ``prefix_rule`` pattern; the command inside ``bash -lc '…'`` is the one compared).
A line that does not parse covers nothing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Any

from fullsend.adapters.runtimes.dialect import DenialJudge
from fullsend.adapters.runtimes.events import as_str
from fullsend.core.final_word import ToolDenial, tool_input_json

CLI = "codex"
SHELL, PATCH = "shell", "apply_patch"
#: (WIRE) item types whose ``declined`` status is a refusal, on either transport.
_DECLINABLE = {"commandExecution": SHELL, "command_execution": SHELL, "fileChange": PATCH, "file_change": PATCH}
DECLINED = "declined"
#: (WIRE, codex app-server) server requests that ask the client for a tool or an approval.
_REQUESTS = {
    "item/commandExecution/requestApproval": SHELL,
    "execCommandApproval": SHELL,
    "item/fileChange/requestApproval": PATCH,
    "applyPatchApproval": PATCH,
    "item/permissions/requestApproval": "permissions",
    "item/tool/requestUserInput": "request_user_input",
}
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh"})
_RULE = re.compile(r"(?P<tool>[A-Za-z0-9_.:/-]+)(?:\((?P<spec>.*)\))?", re.DOTALL)


def item_refusal(item: dict[str, Any]) -> ToolDenial | None:
    """The refusal an item reports (its ``status`` is ``declined``), or None."""
    name = _DECLINABLE.get(as_str(item.get("type")))
    if name is None or item.get("status") != DECLINED:
        return None
    said = as_str(item.get("command")) if name == SHELL else _changed_paths(item.get("changes"))
    return ToolDenial(name, as_str(item.get("id")), said, CLI)


def request_refusal(method: str, params: dict[str, Any], request_id: object) -> ToolDenial | None:
    """The refusal a server request the action answers with an error amounts to, or None (a request
    that is not about a tool: a token refresh, an attestation)."""
    call_id = as_str(params.get("itemId")) or as_str(params.get("callId")) or f"request-{request_id}"
    name = _REQUESTS.get(method)
    if name == SHELL:
        return ToolDenial(SHELL, call_id, as_str(params.get("command")), CLI)
    if name is not None:
        return ToolDenial(name, call_id, as_str(params.get("reason")), CLI)
    if method == "item/tool/call":
        tool = as_str(params.get("tool")) or "a client-side tool"
        return ToolDenial(tool, call_id, tool_input_json(params.get("arguments")), CLI)
    if method == "mcpServer/elicitation/request":
        return ToolDenial(f"mcp__{as_str(params.get('serverName'))}", call_id, as_str(params.get("message")), CLI)
    return None


def rule_matches(rule: str, denial: ToolDenial) -> bool:
    """True when the ``expected_denials`` line ``rule`` covers ``denial`` (see the module docstring)."""
    parsed = _RULE.fullmatch(rule.strip())
    if parsed is None or parsed["tool"] != denial.tool_name:
        return False
    spec = parsed["spec"]
    if spec is None or spec.strip() in ("", "*"):
        return True
    if denial.tool_name != SHELL:
        return False
    want, words = _words(spec), command_words(denial.tool_input)
    return bool(want) and words[: len(want)] == want


def denial_judge(rules: Sequence[str]) -> DenialJudge:
    """The refusals no line of ``rules`` covers (``DenialJudge``)."""
    return lambda denials: tuple(d for d in denials if not any(rule_matches(r, d) for r in rules))


def command_words(command: str) -> list[str]:
    """A command's words; the inner command of ``<shell> -lc '<command>'`` (how Codex runs one)."""
    words = _words(command)
    if len(words) == 3 and words[0] in _SHELLS and words[1] in ("-c", "-lc"):
        return _words(words[2])
    return words


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # an unbalanced quote: compare plain words
        return text.split()


def _changed_paths(changes: object) -> str:
    paths = [as_str(c.get("path")) for c in changes if isinstance(c, dict)] if isinstance(changes, list) else []
    return " ".join(p for p in paths if p)
