"""docs/architecture.md cannot rot: its concept map names real symbols, and every module is on it.

* The "Concept map" section holds one Markdown table with the header ``| Concept | Module |
  Symbol |``.  Each row's module is a path from the repository root in backticks, and its symbol
  a top-level name of that module (a function, a class or an assigned constant) or
  ``Class.method``, in backticks.  The path must exist and the symbol must be defined there (read
  with ``ast``, nothing is imported).
* Every ``fullsend/**/*.py`` module appears in docs/architecture.md by its path.  The one
  exception is a package's ``__init__.py``: it counts as covered when its folder appears
  (``fullsend/core/provenance/``), so a package is listed once, by its folder.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
PACKAGE = REPO_ROOT / "fullsend"
MAP_HEADING = "## Concept map"
MAP_HEADER = "| Concept | Module | Symbol |"
ROW = re.compile(r"^\|\s*(?P<concept>[^|]+?)\s*\|\s*`(?P<module>[^`|]+)`\s*\|\s*`(?P<symbol>[^`|]+)`\s*\|$")
#: Concepts the map must always carry (searched by name; rows may move to other modules).
REQUIRED_CONCEPTS = (
    "Provenance check 4 (the Route job concluded success)",
    "Receipt reader",
    "Receipt writer",
    "Claude ack matcher",
    "Settle state machine",
    "Envelope renderer",
)
MIN_ROWS = 25


@dataclass(frozen=True)
class MapRow:
    """One row of the concept map: its line in docs/architecture.md and its three cells."""

    line: int
    concept: str
    module: str
    symbol: str

    def __str__(self) -> str:
        return f"docs/architecture.md:{self.line}: {self.concept} → {self.module} {self.symbol}"


def concept_map(text: str) -> list[MapRow]:
    """The rows of the table under ``## Concept map``.  Raises ``ValueError`` when the section,
    the header or the separator is missing, or when a table line does not have the fixed shape."""
    lines = text.splitlines()
    try:
        start = lines.index(MAP_HEADING)
        header = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("|"))
    except (ValueError, StopIteration):
        raise ValueError(f"no table under {MAP_HEADING!r}") from None
    if lines[header] != MAP_HEADER or not re.fullmatch(r"\|(-+\|){3}", lines[header + 1].replace(" ", "")):
        raise ValueError(f"line {header + 1}: the map's header must be {MAP_HEADER!r} and a separator row")
    rows = []
    for i in range(header + 2, len(lines)):
        if not lines[i].startswith("|"):
            break
        match = ROW.match(lines[i])
        if match is None:
            raise ValueError(f"line {i + 1}: not a `| concept | `module` | `symbol` |` row: {lines[i]}")
        rows.append(MapRow(i + 1, match["concept"], match["module"], match["symbol"]))
    return rows


def defined_names(tree: ast.Module) -> dict[str, set[str]]:
    """Top-level names of a module → the names defined in their body (methods of a class)."""
    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef):
            names[node.name] = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            }
        elif isinstance(node, ast.Assign):
            names.update({t.id: set() for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
    return names


def symbol_problem(root: Path, module: str, symbol: str) -> str | None:
    """Why ``symbol`` is not defined in ``module`` (a path under ``root``), or ``None``."""
    path = root / module
    if not path.is_file():
        return "no such file"
    names = defined_names(ast.parse(path.read_text(encoding="utf-8")))
    owner, _, member = symbol.partition(".")
    if owner not in names:
        return f"{owner} is not defined at the top level"
    if member and member not in names[owner]:
        return f"{owner} defines no {member}"
    return None


def uncovered_modules(package: Path, root: Path, text: str) -> list[str]:
    """Package modules that docs/architecture.md does not name (``__init__.py``: nor its folder)."""
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if path.name == "__init__.py":
            if f"`{path.parent.relative_to(root).as_posix()}/`" not in text and f"`{rel}`" not in text:
                missing.append(rel)
        elif f"`{rel}`" not in text:
            missing.append(rel)
    return missing


def test_the_concept_map_has_the_fixed_format_and_enough_rows() -> None:
    rows = concept_map(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(rows) >= MIN_ROWS
    concepts = [row.concept for row in rows]
    assert sorted(c for c in set(concepts) if concepts.count(c) > 1) == []
    assert [c for c in REQUIRED_CONCEPTS if c not in concepts] == []


def test_every_row_names_an_existing_module_and_symbol() -> None:
    rows = concept_map(ARCHITECTURE.read_text(encoding="utf-8"))
    broken = [
        f"{row}: {problem}"
        for row in rows
        if (problem := symbol_problem(REPO_ROOT, row.module, row.symbol)) is not None
    ]
    assert broken == []


def test_every_package_module_appears_in_the_architecture_doc() -> None:
    assert uncovered_modules(PACKAGE, REPO_ROOT, ARCHITECTURE.read_text(encoding="utf-8")) == []


def test_provenance_check_4_is_the_route_verdict() -> None:
    """Check 4 (the Route job concluded success, the run created after mine) is split in two."""
    rows = {row.concept: (row.module, row.symbol) for row in concept_map(ARCHITECTURE.read_text(encoding="utf-8"))}
    verdicts = "fullsend/core/provenance/verdicts.py"
    assert rows["Provenance check 4 (the Route job concluded success)"] == (verdicts, "_route_verdict")
    assert rows["Provenance check 4, freshness half (`fresh`)"] == (verdicts, "is_follow_up")


# ---- the checker itself -----------------------------------------------------------------------

SAMPLE_MODULE = """\
LIMIT = 4
TYPED: int = 5


class Feed:
    def note_echo(self):
        pass


def judge():
    pass
"""


@pytest.mark.parametrize(
    ("symbol", "problem"),
    [
        ("judge", None),
        ("LIMIT", None),
        ("TYPED", None),
        ("Feed", None),
        ("Feed.note_echo", None),
        ("Feed.note_nack", "Feed defines no note_nack"),
        ("gone", "gone is not defined at the top level"),
        ("judge.inner", "judge defines no inner"),
    ],
)
def test_symbol_problem_reads_functions_classes_methods_and_constants(
    tmp_path: Path, symbol: str, problem: str | None
) -> None:
    (tmp_path / "mod.py").write_text(SAMPLE_MODULE, encoding="utf-8")
    assert symbol_problem(tmp_path, "mod.py", symbol) == problem
    assert symbol_problem(tmp_path, "other.py", symbol) == "no such file"


def test_concept_map_reads_rows_and_rejects_a_malformed_one() -> None:
    doc = "\n".join(
        [
            "# Architecture",
            "",
            MAP_HEADING,
            "",
            "Intro.",
            "",
            MAP_HEADER,
            "|---|---|---|",
            "| Receipt writer | `fullsend/app/action/skip/preflight.py` | `post_receipt` |",
            "| Claude ack matcher | `fullsend/adapters/runtimes/feed.py` | `SteerFeed.note_echo` |",
            "",
            "## Next",
        ]
    )
    assert concept_map(doc) == [
        MapRow(9, "Receipt writer", "fullsend/app/action/skip/preflight.py", "post_receipt"),
        MapRow(10, "Claude ack matcher", "fullsend/adapters/runtimes/feed.py", "SteerFeed.note_echo"),
    ]
    with pytest.raises(ValueError, match="line 9"):
        concept_map(doc.replace("`post_receipt`", "post_receipt"))
    with pytest.raises(ValueError, match="header"):
        concept_map(doc.replace(MAP_HEADER, "| Concept | Path | Symbol |"))


def test_uncovered_modules_counts_a_folder_for_its_init_only(tmp_path: Path) -> None:
    package = tmp_path / "fullsend"
    (package / "core").mkdir(parents=True)
    for name in ("__init__.py", "core/__init__.py", "core/model.py", "core/other.py"):
        (package / name).write_text("", encoding="utf-8")
    text = "`fullsend/core/` holds `fullsend/core/model.py`."
    assert uncovered_modules(package, tmp_path, text) == ["fullsend/__init__.py", "fullsend/core/other.py"]
