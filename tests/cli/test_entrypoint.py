"""The image's entrypoint (``entrypoint.py``): no arguments is the action (``fullsend run``); any
arguments are a ``fullsend`` command line, so ``docker run IMAGE init --help`` works."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = REPO_ROOT / "entrypoint.py"


def _entrypoint(
    *argv: str, env: dict[str, str] | None = None, cwd: Path = REPO_ROOT
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    return subprocess.run(
        [sys.executable, str(ENTRYPOINT), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("init", "usage: fullsend init"),
        ("steer", "usage: fullsend steer"),
        ("explain", "usage: fullsend explain"),
        ("run", "usage: fullsend run"),
    ],
)
def test_the_entrypoint_runs_the_command_it_is_given(command: str, says: str) -> None:
    proc = _entrypoint(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(says)


def test_the_entrypoint_passes_every_argument_through(tmp_path: Path) -> None:
    ref = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"
    proc = _entrypoint("init", "--stages", "review", "--ref", ref, "--dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".github" / "workflows" / "fullsend.yml").is_file()


def test_the_entrypoint_without_arguments_is_the_action(tmp_path: Path) -> None:
    """No arguments (as GitHub runs a container action): ``fullsend run``, which names its missing input."""
    proc = _entrypoint(env={"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)}, cwd=tmp_path)
    assert proc.returncode == 2
    assert "input 'stage': is required but empty" in proc.stdout


def test_an_unknown_command_is_one_line_and_exit_2() -> None:
    proc = _entrypoint("nonsense")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") <= 2 and "invalid choice: 'nonsense'" in proc.stderr


def test_a_command_other_than_run_still_stops_on_sigterm() -> None:
    """The entrypoint holds SIGTERM and SIGINT for ``run``'s sake; any other command lets them in
    once its handlers are set, so ``docker stop`` ends ``simulator serve`` cleanly (exit 0)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    proc = subprocess.Popen(
        [sys.executable, str(ENTRYPOINT), "simulator", "serve", "--port", "0"],
        env=base,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("Serving;"):
                break
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0
