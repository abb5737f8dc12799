"""Issue 15: ``fullsend run --help`` lists the action's inputs and where the configuration comes from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from fullsend.app.commands.run_help import INPUTS
from fullsend.settings import Inputs

ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"


def test_the_help_lists_exactly_the_inputs_of_action_yml_in_its_order() -> None:
    declared = list(yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["inputs"])
    assert list(INPUTS) == declared
    assert set(Inputs.model_fields) == set(declared)


def test_run_help_names_each_input_variable_and_the_sources() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fullsend", "run", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith("  INPUT_")}
    assert list(rows) == [f"INPUT_{name.upper()}" for name in INPUTS]
    assert rows["INPUT_STAGE"].endswith("triage, code, review, fix, retro or prioritize (required)")
    assert rows["INPUT_RUNTIME"].endswith("claude, pi or codex (default: claude)")
    for source in (
        "the step's 'with:'",
        "GITHUB_REPOSITORY",
        "GITHUB_EVENT_PATH",
        "ANTHROPIC_API_KEY",
        "Steering (absorbing follow-up runs) works only inside GitHub Actions (GITHUB_ACTIONS=true).",
    ):
        assert source in proc.stdout


def test_version_prints_the_package_version_and_exits_0() -> None:
    from fullsend import __version__

    proc = subprocess.run([sys.executable, "-m", "fullsend", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"fullsend {__version__}\n"
