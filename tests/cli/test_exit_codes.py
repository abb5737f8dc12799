"""The one exit-code table (``fullsend.errors.ExitCode``): its values are interface.md's, and no
other module defines exit codes of its own."""

from __future__ import annotations

import ast
from pathlib import Path

from fullsend.__main__ import main
from fullsend.errors import ExitCode

PKG = Path(__file__).resolve().parents[2] / "fullsend"


def test_the_table_holds_the_documented_codes() -> None:
    assert {code.name: int(code) for code in ExitCode} == {"OK": 0, "FAILED": 1, "BAD_INPUT": 2, "INTERRUPTED": 130,
                                                           "PRE_SCRIPT_SKIP": 78, "CODEX_GUARD_REFUSED": 97,
                                                           "CODEX_CONFIG_TAMPERED": 98}


def test_no_module_but_errors_defines_an_exit_code() -> None:
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.Tuple)):
                names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                ints = all(isinstance(v, ast.Constant) and type(v.value) is int for v in values)
                if ints and any("EXIT" in name or name.endswith("_CODE") for name in names):
                    found.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {', '.join(names)}")
    assert found == [], "exit codes outside fullsend.errors.ExitCode:\n" + "\n".join(found)


def test_a_bad_lint_path_returns_the_table_value(tmp_path: Path, capsys) -> None:
    code = main(["lint", "--harness", str(tmp_path / "missing.yaml")])
    assert code is ExitCode.BAD_INPUT and code == 2
