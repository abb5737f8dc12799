"""The status comments' WIRE markers and how to read them back (docs/architecture.md "Status comments").

A run that works posts a start status comment under the role token and edits it (or posts a new
one) to its terminal status.  Both open with ``<!-- fullsend:agent-status:<run id> -->``; the
terminal one's second line is ``<!-- fullsend:status:terminal -->``; a failed run's terminal one
then names the rule its agent's end broke, ``<!-- fullsend:end-rule:<rule id> -->`` (what
``fullsend explain`` prints).  Pure: standard library only.
"""

from __future__ import annotations

import re

STATUS_MARKER = "<!-- fullsend:agent-status:"  # WIRE prefix of both status comments' first line
TERMINAL_TAG = "<!-- fullsend:status:terminal -->"  # WIRE second line of the terminal status comment
END_RULE_MARKER = "<!-- fullsend:end-rule:"  # WIRE prefix of a failed run's rule line (terminal only)
_END_RULE_RE = re.compile(r"^<!-- fullsend:end-rule:([a-z][a-z0-9-]{0,63}) -->\r?$", re.MULTILINE)
#: The first line of a status comment; ``GITHUB_RUN_ID`` is ``[a-zA-Z0-9_-]+``.
_FIRST_LINE_RE = re.compile(r"<!-- fullsend:agent-status:([a-zA-Z0-9_-]+) -->")


def status_line(run_id: str) -> str:
    """The first line of run ``run_id``'s status comments (WIRE)."""
    return f"{STATUS_MARKER}{run_id} -->"


def status_run_id(body: str) -> str | None:
    """The run id a status comment's first line names, or ``None`` when ``body`` is not one."""
    first = body.split("\n", 1)[0].rstrip("\r")
    m = _FIRST_LINE_RE.fullmatch(first)
    return m.group(1) if m else None


def is_terminal(body: str) -> bool:
    """True when ``body`` is a status comment whose second line is the terminal tag."""
    lines = body.split("\n", 2)
    return status_run_id(body) is not None and len(lines) > 1 and lines[1].rstrip("\r") == TERMINAL_TAG


def end_rule_line(rule_id: str) -> str:
    """The terminal status comment's line naming the rule a failed run's agent end broke (WIRE)."""
    return f"{END_RULE_MARKER}{rule_id} -->"


def terminal_end_rule(body: str) -> str:
    """The rule id a terminal status comment names (:func:`end_rule_line`), ``""`` when none."""
    if not is_terminal(body):
        return ""
    m = _END_RULE_RE.search(body)
    return m.group(1) if m else ""
