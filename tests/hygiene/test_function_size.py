"""No function of the package over 60 lines (docs/contributing.md: about 40, never over 60).

A function's length runs from its ``def`` (its decorators excluded) to its last line, docstring and
nested functions included, as ``ast`` reports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "fullsend"
FUNCTION_LINES_MAX = 60


def too_long(source: str, limit: int = FUNCTION_LINES_MAX) -> list[tuple[str, int, int]]:
    """``(name, first line, length)`` of every function of ``source`` longer than ``limit`` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append((node.name, node.lineno, length))
    return found


def test_no_function_of_the_package_is_over_60_lines() -> None:
    found = [
        f"{path.relative_to(PKG.parent)}:{line} {name} is {length} lines"
        for path in sorted(PKG.rglob("*.py"))
        for name, line, length in too_long(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "split these functions (at most 60 lines, about 40):\n" + "\n".join(found)


def test_the_measure_counts_a_function_from_def_to_its_last_line() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    assert too_long(f"def long():\n{body}") == [("long", 1, 61)]
    assert too_long(f"def fits():\n{body[: body.index('x59')]}") == []
    assert too_long(f"class C:\n    async def method(self):\n    {body.replace(chr(10), chr(10) + '    ')}") == [
        ("method", 2, 61)
    ]
