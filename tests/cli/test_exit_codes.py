"""The one exit-code table (``fullsend.errors.ExitCode``): its values are those of docs/architecture.md
"Exit codes", and no
other module defines exit codes of its own."""

from __future__ import annotations

import ast
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fullsend.__main__ import main
from fullsend.errors import ExitCode

PKG = Path(__file__).resolve().parents[2] / "fullsend"


def test_the_table_holds_the_documented_codes() -> None:
    assert {code.name: int(code) for code in ExitCode} == {
        "OK": 0,
        "FAILED": 1,
        "BAD_INPUT": 2,
        "INTERRUPTED": 130,
        "PRE_SCRIPT_SKIP": 78,
        "CODEX_GUARD_REFUSED": 97,
        "CODEX_CONFIG_TAMPERED": 98,
    }


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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_command_started_with_sigint_ignored_still_stops_on_a_signal(signum: int) -> None:
    """A shell's background job (``cmd &``) inherits SIGINT ignored; a command installs its own
    handling before its first request.  ``explain`` against a server that never answers: once
    the server sees the connection, a signal stops the command (exit 130, one line)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(60)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
        env.update(GH_TOKEN="gho_x", GITHUB_API_URL=f"http://127.0.0.1:{server.getsockname()[1]}")
        proc = subprocess.Popen(
            [sys.executable, "-m", "fullsend", "explain", "https://github.com/org/repo/pull/7"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        try:
            connection, _ = server.accept()  # the command is in its first request: its handlers are set
            with connection:
                proc.send_signal(signum)
                _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert err == "fullsend explain: interrupted\n"
