"""Fixtures for the transport tests: the scripted agent as a CLI, and a run in a thread."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.fixture
def scripted_cli(tmp_path: Path) -> str:
    """An executable that runs ``fullsend.simulator.agent.main`` with the test's interpreter.

    A Python shebang (not ``sh``) so the agent's environment is exactly what the runtime gave it.
    """
    path = tmp_path / "scripted-agent"
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "from fullsend.simulator.agent.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    path.chmod(0o755)
    return str(path)
