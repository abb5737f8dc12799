"""Issue 42: docs/adopting.md "The adopter's path, step by step" names the steps of the act tier's
play (1) (``tests/act/adopter``), in its order.  The play records the steps it does and checks
them against its own tuple ``WALKTHROUGH`` (``tests.act.adopter.adopter``); this test holds the
docs to the same tuple."""

from __future__ import annotations

import re
from pathlib import Path

from tests.act.adopter.adopter import WALKTHROUGH

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Play (1)'s steps: the tuple the play itself checks its steps against.
PLAY_ONE_STEPS = WALKTHROUGH
SECTION = "## The adopter's path, step by step"


def documented_steps(text: str | None = None) -> tuple[str, ...]:
    """The bold lead-ins of the numbered list in docs/adopting.md's walk-through section, in order
    (``text``: that page's text, read when ``None``).  Raises ``ValueError`` when the section or
    its list is missing or its items are not numbered 1, 2, 3, …"""
    page = text if text is not None else (REPO_ROOT / "docs" / "adopting.md").read_text(encoding="utf-8")
    if SECTION not in page:
        raise ValueError(f"docs/adopting.md has no section {SECTION!r}")
    body = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^(\d+)\. \*\*(.+?)\*\*:", body, re.M)
    if not items or [int(n) for n, _ in items] != list(range(1, len(items) + 1)):
        raise ValueError(f"the walk-through's list is not numbered 1..n: {[n for n, _ in items]}")
    return tuple(name for _, name in items)


def test_the_walkthrough_names_play_ones_steps_in_its_order() -> None:
    assert documented_steps() == PLAY_ONE_STEPS


def test_a_step_out_of_order_is_caught() -> None:
    page = (REPO_ROOT / "docs" / "adopting.md").read_text(encoding="utf-8")
    swapped = page.replace("**changes requested: Fix**", "**SWAP**").replace(
        "**a pull request opens: Review**", "**changes requested: Fix**"
    )
    assert documented_steps(swapped) != PLAY_ONE_STEPS
