"""Find the rule-id literals in Python source (for the docs/rule-id consistency test).

A string is taken for a rule id where the code uses it as one:

* the value of a ``rule_id=`` keyword (also inside ``x or "accept"``);
* the rule-id argument of ``_reject`` / ``_pending`` (2nd), ``Verdict`` (3rd), ``Skip``,
  ``SkipReport``, ``settle_for`` and ``Diagnostic`` (1st) and ``Finding`` (2nd);
* a module constant named ``RULE_*`` (or a tuple ``RULE_IDS`` / ``*_RULE_IDS`` / ``SETTLE_REASONS``);
* a ``[kebab-id]`` token closing a log line: in a plain string, or ``[{name}]`` in an f-string
  where ``name`` is a local variable assigned string literals or a constant of the module.

Tokens in brackets that are not rule ids (WIRE markers, the ``[bot]`` login suffix) are listed
in :data:`NOT_RULE_TOKENS` with the reason.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
BRACKET = re.compile(r"(?:^|\s)\[([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\](?=$|[\s;:.,)])")
#: callee name → index of its rule-id argument
RULE_ARGS = {
    "_reject": 1,
    "_pending": 1,
    "Verdict": 2,
    "Skip": 0,
    "SkipReport": 0,
    "settle_for": 0,
    "Diagnostic": 0,
    "Finding": 1,
}
NOT_RULE_TOKENS = {
    "bot": "the [bot] suffix of App logins",
    "truncated": "the WIRE truncation marker of the steer text",
    "work-item-context": "the WIRE context fence",
    "tool": "how the Claude stream parser shows a tool call in the agent's output",
}


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _is_rule_constant(name: str) -> bool:
    return name.startswith("RULE_") or name.endswith("RULE_IDS") or name == "SETTLE_REASONS"


class _Scan:
    def __init__(self, path: Path, module: str | None) -> None:
        self.path, self.module = path, module
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.found: dict[str, set[str]] = {}
        self.parents = {child: node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)}

    def add(self, value: str, how: str) -> None:
        if value and KEBAB.fullmatch(value) and value not in NOT_RULE_TOKENS:
            self.found.setdefault(value, set()).add(f"{self.path}: {how}")

    def run(self) -> dict[str, set[str]]:
        for node in ast.walk(self.tree):
            self._visit(node)
        return self.found

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.keyword) and node.arg == "rule_id":
            for s in _strings(node.value):
                self.add(s, "rule_id=")
        elif isinstance(node, ast.Call) and _callee(node) in RULE_ARGS:
            index = RULE_ARGS[_callee(node)]
            if len(node.args) > index and isinstance(node.args[index], ast.Constant):
                self.add(str(node.args[index].value), f"{_callee(node)}()")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and _is_rule_constant(target.id):
                    for s in _strings(node.value):
                        self.add(s, target.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for m in BRACKET.finditer(node.value):
                self.add(m.group(1), "[...] in a string")
        elif isinstance(node, ast.JoinedStr):
            self._fstring(node)

    def _fstring(self, node: ast.JoinedStr) -> None:
        parts = node.values
        for before, value, after in zip(parts, parts[1:], parts[2:], strict=False):
            if (
                isinstance(before, ast.Constant)
                and str(before.value).endswith("[")
                and isinstance(value, ast.FormattedValue)
                and isinstance(after, ast.Constant)
                and str(after.value).startswith("]")
            ):
                for s in self._resolve(value.value, node):
                    self.add(s, "[{...}] in an f-string")

    def _resolve(self, expr: ast.expr, at: ast.AST) -> list[str]:
        if not isinstance(expr, ast.Name):
            return self._module_value(expr)
        local = self._locals(expr.id, at)
        return local if local else self._module_value(expr)

    def _locals(self, name: str, at: ast.AST) -> list[str]:
        func = at
        while func is not None and not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = self.parents.get(func)
        if func is None:
            return []
        out: list[str] = []
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                out += _strings(node.value)
        return out

    def _module_value(self, expr: ast.expr) -> list[str]:
        chain: list[str] = []
        while isinstance(expr, ast.Attribute):
            chain.insert(0, expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or self.module is None:
            return []
        value: object = importlib.import_module(self.module)
        for name in [expr.id, *chain]:
            value = getattr(value, name, None)
        return [value] if isinstance(value, str) else []


def scan_file(path: Path, module: str | None = None) -> dict[str, set[str]]:
    """Rule-id literals in one file → where they were found.  ``module`` (dotted name) lets
    ``[{NAME}]`` in f-strings resolve module constants; ``None`` resolves locals only."""
    return _Scan(path, module).run()


def scan_package(root: Path, package: str) -> dict[str, set[str]]:
    """:func:`scan_file` over every ``*.py`` under ``root`` (the directory of ``package``)."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = [package, *rel.parts]
        if parts[-1] == "__init__":
            parts.pop()
        for rule, where in scan_file(path, ".".join(parts)).items():
            found.setdefault(rule, set()).update(where)
    return found
