"""Claude Code's permission-rule syntax, to match a refused call against ``expected_denials``
(docs/rules.md#tool-refused; the rules as Claude Code's permission settings document them).

A rule is ``Tool`` or ``Tool(specifier)``:

* ``Bash`` or ``Bash(*)`` — every call of the tool; ``mcp__server`` (or ``mcp__server__*``) —
  every tool of that MCP server;
* ``Bash(git push:*)`` — a command that is ``git push`` or starts with ``git push `` (the legacy
  prefix form); ``Bash(npm * --save)`` — ``*`` matches any text, and a single trailing `` *``
  also matches nothing; any other specifier — that command exactly;
* ``Read(…)``, ``Edit(…)``, ``Write(…)`` and the other file tools — the call's path against a
  gitignore-style pattern: ``//abs/**`` from the file-system root, ``~/x`` from the agent's home,
  ``/x`` and ``./x`` or ``x`` from the workspace, and a pattern without ``/`` at any depth;
* ``WebFetch(domain:example.com)`` — a URL on that host (``*.example.com``: any subdomain);
* any other ``Tool(specifier)`` — a call one of whose text inputs the specifier matches, ``*``
  matching any text (``Agent(Explore)``: the sub-agent type ``Explore``).

A rule that does not parse matches nothing: the refusal then fails the run, as an unexpected one.
"""

from __future__ import annotations

import os.path
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from fullsend.adapters.runtimes.claude.refusals import tool_input
from fullsend.adapters.runtimes.events import as_str
from fullsend.core.final_word import ToolDenial

_RULE = re.compile(r"(?P<tool>[A-Za-z0-9_.*-]+)(?:\((?P<spec>.*)\))?", re.DOTALL)
PATH_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
_PATH_KEYS = ("file_path", "notebook_path", "path")


@dataclass(frozen=True)
class RuleContext:
    """Where relative patterns start: the workspace as the agent sees it (``bases``) and its home."""

    bases: tuple[str, ...]
    home: str = ""


def rule_matches(rule: str, denial: ToolDenial, where: RuleContext) -> bool:
    """True when ``rule`` (Claude Code's syntax, see the module docstring) covers ``denial``."""
    parsed = _RULE.fullmatch(rule.strip())
    if parsed is None or not _tool_matches(parsed["tool"], denial.tool_name):
        return False
    spec = parsed["spec"]
    if spec is None or spec.strip() in ("", "*"):
        return True
    args = tool_input(denial)
    if denial.tool_name == "Bash":
        return _command_matches(spec.strip(), as_str(args.get("command")).strip())
    if denial.tool_name in PATH_TOOLS:
        path = next((as_str(args.get(k)) for k in _PATH_KEYS if as_str(args.get(k))), "")
        return bool(path) and _path_matches(spec.strip(), path, where)
    if denial.tool_name == "WebFetch" and spec.startswith("domain:"):
        return _host_matches(spec.removeprefix("domain:").strip(), as_str(args.get("url")))
    return any(_wild(spec, value) for value in args.values() if isinstance(value, str))


def any_rule_matches(rules: Sequence[str], denial: ToolDenial, where: RuleContext) -> bool:
    """True when one of ``rules`` covers ``denial``."""
    return any(rule_matches(rule, denial, where) for rule in rules)


def _tool_matches(tool: str, name: str) -> bool:
    if tool == name:
        return True
    if tool.startswith("mcp__") and tool.endswith("__*"):
        return name.startswith(tool[:-1])
    return tool.startswith("mcp__") and tool.count("__") == 1 and name.startswith(tool + "__")


def _command_matches(spec: str, command: str) -> bool:
    if spec.endswith(":*") and "*" not in spec[:-2]:
        prefix = spec[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if spec.count("*") == 1 and spec.endswith(" *") and command == spec[:-2]:
        return True
    return _wild(spec, command)


def _wild(spec: str, text: str) -> bool:
    """``*`` matches any text (spaces and slashes included); everything else literally."""
    return re.fullmatch(".*".join(re.escape(part) for part in spec.split("*")), text, re.DOTALL) is not None


def _path_matches(spec: str, path: str, where: RuleContext) -> bool:
    if spec.startswith("//"):
        anchors = ["/"]
        spec = spec[2:]
    elif spec.startswith("~/"):
        anchors = [where.home] if where.home else []
        spec = spec[2:]
    else:
        anchors = list(where.bases)
        spec = spec.removeprefix("./").lstrip("/")
    regex = _glob_regex(spec)
    anywhere = "/" not in spec.rstrip("/")
    for anchor in anchors:
        full = os.path.normpath(os.path.join(anchor, path))
        rel = os.path.relpath(full, anchor) if anchor != "/" else full.lstrip("/")
        if rel.startswith(".."):
            continue
        candidates = [rel] + ([rel.rsplit("/", 1)[-1]] if anywhere else [])
        if any(re.fullmatch(regex, c, re.DOTALL) for c in candidates):
            return True
    return False


def _glob_regex(spec: str) -> str:
    """A gitignore-style glob as a regular expression: ``**`` crosses directories, ``*`` and ``?`` do not."""
    out, i = [], 0
    while i < len(spec):
        if spec.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif spec.startswith("**", i):
            out.append(".*")
            i += 2
        elif spec[i] == "*":
            out.append("[^/]*")
            i += 1
        elif spec[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(spec[i]))
            i += 1
    return "".join(out) + ("(?:/.*)?" if not spec.endswith("*") else "")


def _host_matches(domain: str, url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    domain = domain.lower()
    if domain.startswith("*."):
        return host.endswith(domain[1:])
    return bool(host) and host == domain
