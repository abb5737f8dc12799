"""The receipt, skip and token decisions stay pure (shared/design.md "Layers and the dependency
rule"): standard library and ``fullsend.core`` only, no environment, clock, network or processes."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[3] / "fullsend" / "core"
FORBIDDEN_MODULES = {"os", "subprocess", "socket", "time", "threading", "urllib.request", "http", "jinja2", "yaml", "requests", "github"}
FORBIDDEN_CALLS = {"now", "utcnow", "today", "time", "monotonic", "getenv"}


def imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", ["receipt.py", "skips.py", "tokens.py"])
def test_core_module_is_pure(module: str) -> None:
    tree = ast.parse((CORE / module).read_text())
    for name in imported_modules(tree):
        top = name.split(".")[0]
        assert name.startswith("fullsend.core") or (top in sys.stdlib_module_names and top != "fullsend"), name
        assert name not in FORBIDDEN_MODULES and top not in FORBIDDEN_MODULES, name
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not calls & FORBIDDEN_CALLS
