"""docs/runtimes.md shows the terminal-state tables and the version ranges the code has (issue 16):
every row of every runtime's table, with its class, and each runtime's supported range and pin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fullsend.adapters.runtimes import RUNTIMES
from fullsend.adapters.runtimes.claude.found_ends import CLAUDE_FOUND_ENDS
from fullsend.adapters.runtimes.claude.stream import (
    CLAUDE_INCOMPLETE,
    CLAUDE_RESULT_SUBTYPES,
    CLAUDE_STOP_REASONS,
    CLAUDE_TERMINAL_REASONS,
)
from fullsend.adapters.runtimes.codex.appserver.stream import CODEX_APP_SERVER_TERMINAL_STATES
from fullsend.adapters.runtimes.codex.exec.stream import CODEX_TERMINAL_STATES
from fullsend.adapters.runtimes.codex.found_ends import CODEX_APP_SERVER_FOUND_ENDS, CODEX_EXEC_FOUND_ENDS
from fullsend.adapters.runtimes.codex.transport import APP_SERVER_VERSIONS, CODEX_VERSIONS
from fullsend.adapters.runtimes.pi.stream import (
    PI_INCOMPLETE,
    PI_NO_ANSWER,
    PI_NO_MESSAGE,
    PI_SETTLED_ABORTED,
    PI_STOP_REASONS,
)
from fullsend.adapters.runtimes.versions import version_text
from fullsend.core.agent_end import AgentEnd, TerminalState

DOC = (Path(__file__).resolve().parents[2] / "docs" / "runtimes.md").read_text(encoding="utf-8")
ROWS = [
    *CLAUDE_RESULT_SUBTYPES,
    *CLAUDE_TERMINAL_REASONS,
    *CLAUDE_STOP_REASONS,
    CLAUDE_INCOMPLETE,
    *CLAUDE_FOUND_ENDS,
    PI_SETTLED_ABORTED,
    PI_NO_MESSAGE,
    PI_NO_ANSWER,
    *PI_STOP_REASONS,
    PI_INCOMPLETE,
    *CODEX_TERMINAL_STATES,
    *CODEX_EXEC_FOUND_ENDS,
    *CODEX_APP_SERVER_TERMINAL_STATES,
    *CODEX_APP_SERVER_FOUND_ENDS,
]


def _cell(row: TerminalState) -> str:
    """The class column: success, or the rule of the end (an end the action finds itself has its own)."""
    rule = row.rule or row.end.value
    return "**success**" if row.end is AgentEnd.SUCCESS else f"[`{rule}`](rules.md#{rule})"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.shape)
def test_every_terminal_state_has_its_row(row: TerminalState) -> None:
    assert f"| `{row.shape}` | {_cell(row)} | {row.says} |" in DOC


def test_the_docs_list_no_terminal_state_the_code_lacks() -> None:
    """The other way round: every row of the terminal-state tables is a row of the code's tables,
    so the docs cannot promise a success (or any class) the parsers do not give."""
    section = DOC[DOC.index("## Terminal states") : DOC.index("## Codex transports")]
    documented = re.findall(
        r"^\| `([^`]+)` \| (\*\*success\*\*|\[`[a-z-]+`\]\(rules\.md#[a-z-]+\)) \| (.+) \|$", section, re.MULTILINE
    )
    assert sorted(documented) == sorted((r.shape, _cell(r), r.says) for r in ROWS)


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
def test_every_runtime_shows_its_range_and_pin(runtime: str) -> None:
    wanted = RUNTIMES[runtime].cli_versions
    assert f"| `{runtime}` | {wanted.cli} (`{wanted.package}`) |" in DOC
    assert f"| {wanted.range_text} | {version_text(wanted.pinned)} |" in DOC


def test_the_codex_transports_show_their_ranges() -> None:
    assert f"| app-server | {APP_SERVER_VERSIONS.range_text} |" in DOC
    assert f"| exec | {CODEX_VERSIONS.range_text} (every supported Codex) |" in DOC
