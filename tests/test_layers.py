"""The dependency rule of design.md: ``fullsend.core`` imports the standard library and itself only,
and only ``fullsend/adapters/github*.py`` imports PyGithub."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "fullsend"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((PKG / "core").glob("*.py")), ids=lambda p: p.name)
def test_core_imports_only_stdlib_and_core(path):
    bad = {n for n in _imports(path) if n.split(".")[0] not in sys.stdlib_module_names and not n.startswith("fullsend.core")}
    assert bad == set(), f"{path.name} reaches out of core: {sorted(bad)}"


def test_only_the_github_adapter_imports_pygithub():
    users = {p.name for p in PKG.rglob("*.py") if any(n == "github" or n.startswith("github.") for n in _imports(p))}
    assert users <= {"github.py", "github_http.py"}
