"""Nothing in the repository cites a document a reader of it cannot open.

Code comments, docstrings, tests, CI files and tools cite ``docs/rules.md`` rule ids
(``docs/rules.md#route-not-success``) and ``docs/architecture.md`` sections by heading text
(``docs/architecture.md "Provenance"``).  They never cite the team's reference material, which is
not part of the repository: its specification folder and files, the interface and design notes,
paths into the shared folder, the seeds, ADR numbers, bug-case ids or numbered sections (no
document in this repository numbers its sections).

Every file ``git ls-files`` lists is scanned, binary files excepted; the only lines exempt are
the ones below that define :data:`FOREIGN` itself.  Every failure names ``file:line`` and the
text found there.  A second test checks that every citation of the two documents resolves: the
heading exists, the rule id has a section.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.docs.repo_files import tracked_files
from tests.support.tools import missing_tool

REPO_ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = Path(__file__).resolve()

# The regex must name what it finds, so its own lines are the one exemption (see _exempt_lines).
FOREIGN = re.compile(
    r"(?<![\w-])spec/"  # spec/watcher.md …
    r"|(?<![\w/.-])(?:interface|design)\.md\b"  # interface.md, design.md
    r"|(?<![\w.-])shared/"  # shared/… paths
    r"|(?<![\w-])seeds/"  # seeds/000…
    r"|\bADR[ -]?\d{3,4}\b"  # ADR 0120
    r"|(?<![\w-])(?i:BC)[-_ ]?\d+[a-z]*(?![\w])|\bbug-cases\b"  # BC-21, BC-14a, bc_09f, cases/bug-cases.md
    r"|\b(?:watcher\.md|runtime-transport|receipt-preflight-tokens|ecosystem-notes|implementation-notes)\b"
    r"|§"  # numbered sections
)
ARCHITECTURE_CITE = re.compile(r'docs/architecture\.md\s+((?:"[^"\n]+"(?:,\s*|\s+and\s+)?)+)')
RULES_CITE = re.compile(r"docs/rules\.md#([a-z0-9-]+)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _exempt_lines(path: Path, lines: list[str]) -> set[int]:
    """The 1-based numbers of this file's lines that define FOREIGN; none in any other file."""
    if path.resolve() != THIS_FILE:
        return set()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("FOREIGN = re.compile("))
    end = next(i for i, line in enumerate(lines, 1) if i > start and line == ")")
    return set(range(start, end + 1))


def foreign_references(root: Path, files: list[Path]) -> list[str]:
    """``file:line: text`` for every citation of the team's reference material in ``files``
    (paths under ``root``)."""
    found = []
    for path in files:
        lines = _lines(path)
        exempt = _exempt_lines(path, lines)
        for number, line in enumerate(lines, 1):
            if number in exempt:
                continue
            for match in FOREIGN.finditer(line):
                found.append(f"{path.relative_to(root)}:{number}: {match.group(0)!r} in {line.strip()[:120]!r}")
    return found


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lowercase, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def unresolved_citations(root: Path, files: list[Path]) -> list[str]:
    """``file:line: citation`` for every citation in ``files`` of a heading of ``root``'s
    architecture map that does not exist and of a rule id whose anchor in its rules does not."""
    architecture = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    headings = {h.replace("`", "") for h in HEADING.findall(architecture)}
    rules_anchors = {_anchor(h) for h in HEADING.findall((root / "docs" / "rules.md").read_text(encoding="utf-8"))}
    broken = []
    for path in files:
        for number, line in enumerate(_lines(path), 1):
            for match in ARCHITECTURE_CITE.finditer(line):
                for heading in re.findall(r'"([^"\n]+)"', match.group(1)):
                    if heading not in headings:
                        broken.append(f"{path.relative_to(root)}:{number}: docs/architecture.md heading {heading!r}")
            for anchor in RULES_CITE.findall(line):
                if anchor not in rules_anchors:
                    broken.append(f"{path.relative_to(root)}:{number}: docs/rules.md anchor {anchor!r}")
    return broken


def test_nothing_in_the_repository_cites_the_team_reference() -> None:
    found = foreign_references(REPO_ROOT, tracked_files(REPO_ROOT))
    if found:
        pytest.fail("cite docs/rules.md or docs/architecture.md instead:\n" + "\n".join(found), pytrace=False)


def test_every_citation_of_our_docs_resolves() -> None:
    broken = unresolved_citations(REPO_ROOT, tracked_files(REPO_ROOT))
    if broken:
        pytest.fail("no such heading or rule id:\n" + "\n".join(broken), pytrace=False)


# ---- the checkers themselves ------------------------------------------------------------------
# The samples spell the cited names with escapes (\x2f is "/", \x2d "-", \x2e ".", \u00a7 the
# section sign) so that this file's own text passes its scan; the strings the tests build hold
# the real characters.


def _git_repo(root: Path, files: dict[str, bytes], untracked: dict[str, bytes]) -> None:
    if shutil.which("git") is None:
        missing_tool("git (to list the tracked files)", "apt-get install -y git")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, data in {**files, **untracked}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    subprocess.run(["git", "add", "--", *files], cwd=root, check=True)


def test_every_tracked_text_file_is_scanned_and_nothing_else(tmp_path: Path) -> None:
    cite = b"see spec\x2fwatcher.md\n"
    _git_repo(
        tmp_path,
        {".ci/run": cite, "tests/a_test.py": cite, "logo.png": b"\x89PNG\0" + cite, "latin.txt": b"\xe9" + cite},
        untracked={"scratch.py": cite},
    )
    files = tracked_files(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in files] == [".ci/run", "tests/a_test.py"]
    assert sorted({f.split(":")[0] for f in foreign_references(tmp_path, files)}) == [".ci/run", "tests/a_test.py"]


@pytest.mark.parametrize(
    "text",
    [
        "# Listing (spec\x2fwatcher\x2emd \u00a74)",
        'see ``shared\x2fdesign\x2emd`` "Layers"',
        '(interface\x2emd "Outputs")',
        "ADR\x200120 says so",
        "the sandbox stays in Error (BC\x2d21)",
        'ids=["BC\x2d09f", "BC\x2d09g"]',
        '("BC\x2d14a-no-substring-match", [], False)',
        "bc\x5f14b",
        "BC\x2014",
        "runtime\x2dtransport \u00a74.3",
        "seeds\x2f000",
        "(\u00a72.5)",
        "cases/bug\x2dcases.md",
    ],
)
def test_a_foreign_citation_is_named_by_file_and_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "mod.py").write_text(f"x = 1\n{text}\n", encoding="utf-8")
    found = foreign_references(tmp_path, [tmp_path / "tests" / "mod.py"])
    assert len(found) >= 1 and all(f.startswith("tests/mod.py:2: ") for f in found)


def test_only_the_definition_of_the_regex_is_exempt() -> None:
    lines = _lines(THIS_FILE)
    exempt = _exempt_lines(THIS_FILE, lines)
    assert lines[min(exempt) - 1].startswith("FOREIGN = re.compile(") and lines[max(exempt) - 1] == ")"
    assert len(exempt) < 15
    assert _exempt_lines(REPO_ROOT / "docs" / "rules.md", _lines(REPO_ROOT / "docs" / "rules.md")) == set()


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
    assert foreign_references(tmp_path, [tmp_path / "fullsend" / "mod.py"]) == []


def test_unresolved_citations_are_named(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text(
        "# Architecture\n\n## Layers\n\n### Receipt reader\n", encoding="utf-8"
    )
    (tmp_path / "docs" / "rules.md").write_text("# Rules\n\n## Provenance\n\n### `route-missing`\n", encoding="utf-8")
    (tmp_path / "fullsend").mkdir()
    (tmp_path / "fullsend" / "mod.py").write_text(
        '# docs/architecture\x2emd "Layers", "Receipt reader" and "Listing"\n'
        "# docs/rules\x2emd#route-missing, docs/rules\x2emd#provenance, docs/rules\x2emd#route-gone\n",
        encoding="utf-8",
    )
    assert unresolved_citations(tmp_path, [tmp_path / "fullsend" / "mod.py"]) == [
        "fullsend/mod.py:1: docs/architecture.md heading 'Listing'",
        "fullsend/mod.py:2: docs/rules.md anchor 'route-gone'",
    ]
