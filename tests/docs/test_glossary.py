"""Issue 15: docs/glossary.md defines the words the log, the summary and the demo use; the README
and the demo point to it; its links into docs/rules.md land on a heading."""

from __future__ import annotations

import re
from pathlib import Path

from fullsend.app.commands.demo import READ_MORE

REPO_ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = REPO_ROOT / "docs" / "glossary.md"
TERMS = (
    "Steer",
    "Settle",
    "Receipt",
    "Amendment",
    "Context",
    "Shim",
    "Route job",
    "Stage job",
    "Job token",
    "Role token",
    "Envelope",
    "Baseline",
    "Delta",
    "Watcher",
    "Judge",
    "Turn",
    "Pre-flight",
)
ENTRY = re.compile(r"^\*\*([^*]+)\.\*\* ", re.MULTILINE)
RULES_LINK = re.compile(r"\(rules\.md#([a-z0-9-]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of ``markdown`` (lower case, spaces to '-', punctuation dropped)."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}


def test_every_term_has_an_entry() -> None:
    entries = set(ENTRY.findall(GLOSSARY.read_text(encoding="utf-8")))
    assert set(TERMS) <= entries, set(TERMS) - entries


def test_links_into_rules_md_land_on_a_heading() -> None:
    anchors = _anchors((REPO_ROOT / "docs" / "rules.md").read_text(encoding="utf-8"))
    links = RULES_LINK.findall(GLOSSARY.read_text(encoding="utf-8"))
    assert links and not [link for link in links if link not in anchors]


def test_the_readme_and_the_demo_point_to_it() -> None:
    assert "(docs/glossary.md)" in (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/glossary.md" in READ_MORE
