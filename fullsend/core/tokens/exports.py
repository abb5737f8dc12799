"""What the runner exports into the sandbox's env file (docs/architecture.md "Sandbox environment").

``FULLSEND_RUN_STARTED_AT`` / ``FULLSEND_RUN_HEAD_SHA`` (WIRE) are written unconditionally, in
that order, single-quoted; ``FULLSEND_STEER_ACTIVE`` (WIRE) is exported only while a watcher runs
for the iteration and explicitly unset otherwise, so a value planted earlier cannot survive.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

STARTED_AT = "FULLSEND_RUN_STARTED_AT"  # WIRE
HEAD_SHA = "FULLSEND_RUN_HEAD_SHA"  # WIRE
STEER_ACTIVE = "FULLSEND_STEER_ACTIVE"  # WIRE
RESERVED = (STARTED_AT, HEAD_SHA, STEER_ACTIVE)


def shell_quote(value: str) -> str:
    """``'`` + value with every ``'`` as ``'\\''`` + ``'`` (as the live feed quotes)."""
    return "'" + value.replace("'", "'\\''") + "'"


def started_at_text(started_at: datetime) -> str:
    """RFC 3339 UTC to the second with ``Z``; a non-UTC instant is converted."""
    return started_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_fact_lines(started_at: str, head_sha: str) -> list[str]:
    """The two run-fact lines, in order; ``started_at`` already formatted, ``head_sha`` may be ""."""
    return [f"export {STARTED_AT}={shell_quote(started_at)}", f"export {HEAD_SHA}={shell_quote(head_sha)}"]


def iteration_line(active: bool) -> str:
    """``export FULLSEND_STEER_ACTIVE=1`` while a watcher runs, else ``unset …``."""
    return f"export {STEER_ACTIVE}=1" if active else f"unset {STEER_ACTIVE}"


def env_file_lines(env: dict[str, str], quote_name_check: Callable[[str], None]) -> list[str]:
    """The whole env file, in order: ``PATH``, the rest sorted (reserved keys skipped), the run
    facts, and last the iteration line.  ``quote_name_check(name)`` raises for an invalid name."""
    for name in env:
        quote_name_check(name)
    lines = [f"export PATH={shell_quote(env['PATH'])}"] if "PATH" in env else []
    lines += [f"export {k}={shell_quote(v)}" for k, v in sorted(env.items()) if k != "PATH" and k not in RESERVED]
    lines += run_fact_lines(env.get(STARTED_AT, ""), env.get(HEAD_SHA, ""))
    lines.append(iteration_line(env.get(STEER_ACTIVE) == "1"))
    return lines
