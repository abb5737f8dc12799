"""What ships cites only documents a reader of this repository can open.

Code comments, docstrings and shipped files cite ``docs/rules.md`` rule ids
(``docs/rules.md#route-not-success``) and ``docs/architecture.md`` sections by heading text
(``docs/architecture.md "Provenance"``).  They never cite the team's reference material, which is
not part of the repository: its ``spec/`` files, ``interface.md``, ``design.md``, ``shared/``
paths, ``seeds/``, ADR numbers, bug-case ids (``BC-21``) or numbered sections (``§4.3``; no
document in this repository numbers its sections).

Every failure names ``file:line`` and the text found there.  A second test checks that every
citation of the two documents resolves: the heading exists, the rule id has a section.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Folders whose every text file is scanned, and single files scanned on their own.
SCANNED_DIRS = ("fullsend", "examples", "tools", "bench", "docs")
SCANNED_FILES = ("Dockerfile", "entrypoint.py", "action.yml", "README.md", "SECURITY.md", "CONTRIBUTING.md")
SKIPPED_SUFFIXES = {".pyc", ".png", ".jpg", ".gif", ".ico", ".gz", ".zip"}

FOREIGN = re.compile(
    r"(?<![\w-])spec/"  # spec/watcher.md …
    r"|(?<![\w/.-])(?:interface|design)\.md\b"  # interface.md, design.md
    r"|(?<![\w.-])shared/"  # shared/… paths
    r"|(?<![\w-])seeds/"  # seeds/000…
    r"|\bADR[ -]?\d{3,4}\b"  # ADR 0120
    r"|\bBC-\d+\b|\bbug-cases\b"  # BC-21, cases/bug-cases.md
    r"|\b(?:watcher\.md|runtime-transport|receipt-preflight-tokens|ecosystem-notes|implementation-notes)\b"
    r"|§"  # numbered sections
)
ARCHITECTURE_CITE = re.compile(r'docs/architecture\.md\s+((?:"[^"\n]+"(?:,\s*|\s+and\s+)?)+)')
RULES_CITE = re.compile(r"docs/rules\.md#([a-z0-9-]+)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def scanned_files(root: Path) -> list[Path]:
    """The files the rule covers, sorted; missing ones are skipped."""
    files = [root / name for name in SCANNED_FILES if (root / name).is_file()]
    for folder in SCANNED_DIRS:
        files += [
            p
            for p in (root / folder).rglob("*")
            if p.is_file() and p.suffix not in SKIPPED_SUFFIXES and "__pycache__" not in p.parts
        ]
    return sorted(files)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        return []


def foreign_references(root: Path) -> list[str]:
    """``file:line: text`` for every citation of the team's reference material under ``root``."""
    found = []
    for path in scanned_files(root):
        for number, line in enumerate(_lines(path), 1):
            for match in FOREIGN.finditer(line):
                found.append(f"{path.relative_to(root)}:{number}: {match.group(0)!r} in {line.strip()[:120]!r}")
    return found


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lowercase, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def unresolved_citations(root: Path) -> list[str]:
    """``file:line: citation`` for every ``docs/architecture.md "X"`` whose heading X does not
    exist and every ``docs/rules.md#id`` whose anchor does not exist."""
    architecture = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    headings = {h.replace("`", "") for h in HEADING.findall(architecture)}
    rules_anchors = {_anchor(h) for h in HEADING.findall((root / "docs" / "rules.md").read_text(encoding="utf-8"))}
    broken = []
    for path in scanned_files(root):
        for number, line in enumerate(_lines(path), 1):
            for match in ARCHITECTURE_CITE.finditer(line):
                for heading in re.findall(r'"([^"\n]+)"', match.group(1)):
                    if heading not in headings:
                        broken.append(f'{path.relative_to(root)}:{number}: docs/architecture.md "{heading}"')
            for anchor in RULES_CITE.findall(line):
                if anchor not in rules_anchors:
                    broken.append(f"{path.relative_to(root)}:{number}: docs/rules.md#{anchor}")
    return broken


def test_nothing_shipped_cites_the_team_reference() -> None:
    found = foreign_references(REPO_ROOT)
    if found:
        pytest.fail("cite docs/rules.md or docs/architecture.md instead:\n" + "\n".join(found), pytrace=False)


def test_every_citation_of_our_docs_resolves() -> None:
    broken = unresolved_citations(REPO_ROOT)
    if broken:
        pytest.fail("no such heading or rule id:\n" + "\n".join(broken), pytrace=False)


# ---- the checkers themselves ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "# Listing (spec/watcher.md §4)",
        'see ``shared/design.md`` "Layers"',
        '(interface.md "Outputs")',
        "ADR 0120 says so",
        "the sandbox stays in Error (BC-21)",
        "runtime-transport §4.3",
        "seeds/000",
        "(§2.5)",
    ],
)
def test_a_foreign_citation_is_named_by_file_and_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "fullsend").mkdir()
    (tmp_path / "fullsend" / "mod.py").write_text(f"x = 1\n{text}\n", encoding="utf-8")
    found = foreign_references(tmp_path)
    assert len(found) >= 1 and all(f.startswith("fullsend/mod.py:2: ") for f in found)


@pytest.mark.parametrize(
    "text",
    [
        'the layers (docs/architecture.md "Layers"; docs/rules.md#route-missing)',
        'a spec of the comparison: spec = f"{base}...{head}"',
        "tests/data/openapi/github-rest-trimmed.json, the Route job's exact name",
    ],
)
def test_our_own_citations_and_ordinary_words_pass(tmp_path: Path, text: str) -> None:
    (tmp_path / "fullsend").mkdir()
    (tmp_path / "fullsend" / "mod.py").write_text(text + "\n", encoding="utf-8")
    assert foreign_references(tmp_path) == []


def test_unresolved_citations_are_named(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text(
        "# Architecture\n\n## Layers\n\n### Receipt reader\n", encoding="utf-8"
    )
    (tmp_path / "docs" / "rules.md").write_text("# Rules\n\n## Provenance\n\n### `route-missing`\n", encoding="utf-8")
    (tmp_path / "fullsend").mkdir()
    (tmp_path / "fullsend" / "mod.py").write_text(
        '# docs/architecture.md "Layers", "Receipt reader" and "Listing"\n'
        "# docs/rules.md#route-missing, docs/rules.md#provenance, docs/rules.md#route-gone\n",
        encoding="utf-8",
    )
    assert unresolved_citations(tmp_path) == [
        'fullsend/mod.py:1: docs/architecture.md "Listing"',
        "fullsend/mod.py:2: docs/rules.md#route-gone",
    ]
