"""Issue 16: each runtime declares the CLI versions it supports, and an unsupported or unreadable
``<agent_cli> --version`` is refused before the agent starts (exit 2 through ``ConfigError``).

The CLIs here are tiny scripts printing what the real ones print: ``2.1.332 (Claude Code)``,
``1.6.0`` (pi) and ``codex-cli 0.171.0``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fullsend.adapters.runtimes import RUNTIMES
from fullsend.adapters.runtimes.claude.runtime import CLAUDE_VERSIONS
from fullsend.adapters.runtimes.codex.runtime import CODEX_VERSIONS
from fullsend.adapters.runtimes.pi.runtime import PI_VERSIONS
from fullsend.adapters.runtimes.versions import check_cli_version
from fullsend.core.cli_versions import CliVersions
from fullsend.errors import ConfigError

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}


def fake_cli(tmp_path: Path, output: str, code: int = 0, name: str = "agent") -> str:
    """An executable printing ``output`` for ``--version`` and exiting ``code``."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\nprintf '%s\\n' '{output}'\nexit {code}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    ("wanted", "output", "found"),
    [
        (CLAUDE_VERSIONS, "2.1.332 (Claude Code)", (2, 1, 332)),
        (PI_VERSIONS, "1.6.0", (1, 6, 0)),
        (CODEX_VERSIONS, "codex-cli 0.171.0", (0, 171, 0)),
        (PI_VERSIONS, "(node:12) ExperimentalWarning: …\n1.6.0", (1, 6, 0)),
        (CLAUDE_VERSIONS, "1.6.0", None),  # pi is not Claude Code
        (PI_VERSIONS, "codex-cli 0.171.0", None),
        (CODEX_VERSIONS, "2.1.332 (Claude Code)", None),
        (CLAUDE_VERSIONS, "", None),
    ],
)
def test_each_runtime_reads_its_own_clis_version_line(wanted: CliVersions, output: str, found) -> None:
    assert wanted.version_in(output) == found


def test_every_runtime_declares_a_range_holding_its_pin() -> None:
    for name, runtime in RUNTIMES.items():
        wanted = runtime.cli_versions
        assert wanted.supports(wanted.pinned) and wanted.minimum < wanted.below, name


@pytest.mark.parametrize(
    ("runtime", "output"),
    [
        ("claude", "2.1.332 (Claude Code)"),
        ("claude", "2.1.296 (Claude Code)"),
        ("pi", "1.6.0"),
        ("codex", "codex-cli 0.171.0"),
        ("codex", "codex-cli 0.152.1"),
    ],
)
def test_a_supported_version_passes(tmp_path: Path, runtime: str, output: str) -> None:
    wanted = RUNTIMES[runtime].cli_versions
    found = check_cli_version(wanted, runtime, fake_cli(tmp_path, output), ENV, tmp_path)
    assert wanted.version_in(output) == found


@pytest.mark.parametrize(
    ("runtime", "output", "message"),
    [
        (
            "claude",
            "2.0.77 (Claude Code)",
            "agent_cli 'agent' is Claude Code 2.0.77, but the claude runtime supports Claude Code >= 2.1.296 and < 2.2.0; "
            "point agent_cli at a supported Claude Code (npm install @anthropic-ai/claude-code@2.1.332) or use the "
            "action's image, which ships it [cli-unsupported]",
        ),
        (
            "pi",
            "0.84.4",
            "agent_cli 'agent' is pi 0.84.4, but the pi runtime supports pi >= 1.6.0 and < 1.7.0; point agent_cli at a "
            "supported pi (npm install @earendil-works/pi-coding-agent@1.6.0) or use the action's image, which ships it "
            "[cli-unsupported]",
        ),
        (
            "codex",
            "codex-cli 0.180.0",
            "agent_cli 'agent' is Codex 0.180.0, but the codex runtime supports Codex >= 0.152.1 and < 0.172.0; point "
            "agent_cli at a supported Codex (npm install @openai/codex@0.171.0) or use the action's image, which ships it "
            "[cli-unsupported]",
        ),
    ],
)
def test_an_unsupported_version_is_refused_naming_found_range_and_fix(
    tmp_path: Path, runtime: str, output: str, message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        check_cli_version(RUNTIMES[runtime].cli_versions, runtime, fake_cli(tmp_path, output), ENV, tmp_path)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("output", "code", "seen"),
    [
        ("scripted", 0, "its --version printed 'scripted'"),
        ("", 0, "its --version printed nothing"),
        ("2.1.332 (Claude Code)", 1, "exit 1"),
    ],
)
def test_an_unreadable_version_is_refused(tmp_path: Path, output: str, code: int, seen: str) -> None:
    with pytest.raises(ConfigError) as refused:
        check_cli_version(CLAUDE_VERSIONS, "claude", fake_cli(tmp_path, output, code), ENV, tmp_path)
    assert f"did not report a Claude Code version ({seen})" in str(refused.value)


def test_a_cli_that_cannot_start_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "not-executable"
    path.write_text("#!/bin/sh\n")
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match=r"did not report a pi version \(.*\) .*\[cli-unsupported\]$"):
        check_cli_version(PI_VERSIONS, "pi", str(path), ENV, tmp_path)


def test_the_check_runs_with_exactly_the_given_environment(tmp_path: Path) -> None:
    dump = tmp_path / "env.txt"
    path = tmp_path / "agent"
    path.write_text(f"#!/bin/sh\nenv > '{dump}'\necho '1.6.0'\n")
    path.chmod(0o755)
    check_cli_version(PI_VERSIONS, "pi", str(path), {**ENV, "ONLY_THIS": "1"}, tmp_path)
    names = {line.split("=", 1)[0] for line in dump.read_text().splitlines()}
    assert "ONLY_THIS" in names and "GITHUB_TOKEN" not in names
