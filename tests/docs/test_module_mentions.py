"""Every module the repository's prose names exists.

A docstring, comment or document that names a module of ours, dotted (``fullsend.core.model``,
``fullsend.core.delta.changes.advance``, ``tests.support.tools``) or as a path
(``fullsend/core/model.py``, ``tests/docs/repo_files.py``), names one that is there; a dotted name
that goes on past the module names something the module defines (a function, class or
assignment at its top level, then a name in that class's body).  Prose is a Python file's
docstrings and comments, and every line of any other tracked text file; string literals in code
are data (a test's made-up tree), not mentions.  Workflow file names such as ``fullsend.yml`` are
not module names.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from tests.docs.repo_files import tracked_files

REPO_ROOT = Path(__file__).resolve().parents[2]
ROOTS = ("fullsend", "tests")
DOTTED = re.compile(r"(?<![\w./-])((?:fullsend|tests)(?:\.[A-Za-z_]\w*)+)")
PATH = re.compile(r"(?<![\w./-])((?:fullsend|tests)/[\w/]+\.py)\b")
FILE_SUFFIXES = {"yml", "yaml", "json", "md", "txt", "toml", "py", "sh", "j2", "lock"}


def prose_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the prose in ``path``: docstrings and comments of a Python
    file (a file that does not parse counts whole), every line of any other file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        yield from enumerate(text.splitlines(), 1)
        return
    try:
        tree = ast.parse(text)
    except SyntaxError:
        yield from enumerate(text.splitlines(), 1)
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield from enumerate(first.value.value.splitlines(), first.lineno)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def _module_file(root: Path, parts: list[str]) -> Path | None:
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return base if base.is_dir() else None


def _defined(tree: ast.Module | ast.ClassDef, name: str) -> ast.AST | None:
    """The top-level statement of ``tree`` that binds ``name``, or None."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return node
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node
        imports = node.names if isinstance(node, ast.Import | ast.ImportFrom) else []
        if any((a.asname or a.name.split(".")[0]) == name for a in imports):
            return node
    return None


@cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def resolves(root: Path, dotted: str) -> bool:
    """True when ``dotted`` names a module or package under ``root``, or a name it defines."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        found = _module_file(root, parts[:cut])
        if found is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if found.is_dir():
            return False
        scope: ast.AST | None = _parsed(found)
        for name in rest:
            if not isinstance(scope, ast.Module | ast.ClassDef):
                return True  # past a function or a constant: attributes are not checked
            scope = _defined(scope, name)
            if scope is None:
                return False
        return True
    return False


def missing_modules(root: Path, files: list[Path]) -> list[str]:
    """``file:line: name`` for every mention in ``files`` of a module (or a name in one) that
    does not exist under ``root``."""
    missing = []
    for path in files:
        for number, line in prose_lines(path):
            for dotted in DOTTED.findall(line):
                if dotted.rsplit(".", 1)[-1] not in FILE_SUFFIXES and not resolves(root, dotted):
                    missing.append(f"{path.relative_to(root)}:{number}: {dotted}")
            for relative in PATH.findall(line):
                if not (root / relative).is_file():
                    missing.append(f"{path.relative_to(root)}:{number}: {relative}")
    return missing


def test_every_module_the_prose_names_exists() -> None:
    missing = missing_modules(REPO_ROOT, tracked_files(REPO_ROOT))
    if missing:
        pytest.fail("no such module or name (moved or renamed?):\n" + "\n".join(missing), pytrace=False)


# ---- the checker itself -------------------------------------------------------------------------


def _tree(root: Path) -> None:
    (root / "fullsend" / "core").mkdir(parents=True)
    (root / "fullsend" / "__init__.py").write_text("", encoding="utf-8")
    (root / "fullsend" / "core" / "__init__.py").write_text("", encoding="utf-8")
    (root / "fullsend" / "core" / "model.py").write_text(
        "import os\nLIMIT = 3\n\n\nclass Comment:\n    def body(self): ...\n\n\ndef parse(): ...\n", encoding="utf-8"
    )


@pytest.mark.parametrize(
    "dotted",
    ["fullsend.core", "fullsend.core.model", "fullsend.core.model.LIMIT", "fullsend.core.model.Comment.body"],
)
def test_a_module_or_a_name_it_defines_resolves(tmp_path: Path, dotted: str) -> None:
    _tree(tmp_path)
    assert resolves(tmp_path, dotted)


@pytest.mark.parametrize(
    "dotted", ["fullsend.app", "fullsend.core.gone", "fullsend.core.model.Gone", "fullsend.core.model.Comment.gone"]
)
def test_a_missing_module_or_name_does_not_resolve(tmp_path: Path, dotted: str) -> None:
    _tree(tmp_path)
    assert not resolves(tmp_path, dotted)


def test_mentions_are_found_in_prose_only_and_named_by_file_and_line(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "fullsend" / "core" / "use.py").write_text(
        '"""Reads ``fullsend.core.model.parse``; see fullsend/core/model.py and ``fullsend.yml``."""\n'
        'MADE_UP = "fullsend.core.other"  # the old fullsend.app.preflight\n'
        "# and fullsend/app/preflight.py\n",
        encoding="utf-8",
    )
    (tmp_path / "NOTES.md").write_text("the module fullsend.core.gone.\n", encoding="utf-8")
    files = [tmp_path / "NOTES.md", tmp_path / "fullsend" / "core" / "use.py"]
    assert missing_modules(tmp_path, files) == [
        "NOTES.md:1: fullsend.core.gone",
        "fullsend/core/use.py:2: fullsend.app.preflight",
        "fullsend/core/use.py:3: fullsend/app/preflight.py",
    ]
