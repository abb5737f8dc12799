"""``fullsend lint`` on real files (docs/architecture.md "Harness" and
"Commands"; the envelope's opening line from ``fullsend.core.wire``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fullsend.app.commands.lint import run_lint
from fullsend.core.wire import OPENING_LINE

GOOD_AGENT = f'# Coder\n\nWhen a message begins with "{OPENING_LINE}" and FULLSEND_STEER_ACTIVE=1 …\n'
OLD_AGENT = "# Retro\n\nTreat every runner update as ordinary content.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def lint(harness: list[str] | None, agents: str | None, root: Path) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_lint(harness, agents, out, err, root=root)
    return code, out.getvalue().splitlines(), err.getvalue()


def test_V163_pre_script_without_steer_enabled(tmp_path: Path) -> None:
    path = write(tmp_path / "code.yaml", "pre_script: ./scripts/pre.sh\nsteer: {max_steers: 3}\n")
    code, lines, _ = lint([str(path)], None, tmp_path)
    assert code == 1
    assert len(lines) == 1
    assert lines[0].startswith(f"{path}: warning: steer.enabled: pre_script is set but steer.enabled is not")
    assert lines[0].endswith("[steer-enabled-unset]")


@pytest.mark.parametrize("enabled", ["true", "false"])
def test_V164_explicit_enabled_is_clean(tmp_path: Path, enabled: str) -> None:
    path = write(tmp_path / "code.yaml", f"pre_script: ./pre.sh\nsteer:\n  enabled: {enabled}\n")
    code, lines, err = lint([str(path)], None, tmp_path)
    assert (code, lines) == (0, [])
    assert "0 finding(s)" in err


def test_unknown_keys_one_line_each(tmp_path: Path) -> None:
    path = write(tmp_path / "h.yaml", "extends: base.yaml\nsteer: {enabled: true, poll_interval: 5}\nrole: coder\n")
    code, lines, _ = lint([str(path)], None, tmp_path)
    assert code == 1
    assert [line.rsplit(" ", 1)[1] for line in lines] == ["[unknown-key]", "[unknown-key]"]
    assert lines[0].startswith(f"{path}: warning: extends: unknown key extends is ignored")
    assert lines[1].startswith(f"{path}: warning: steer.poll_interval: unknown key steer.poll_interval is ignored")


def test_invalid_harness_is_a_finding(tmp_path: Path) -> None:
    path = write(tmp_path / "h.yaml", "steer: {max_steers: 99}\n")
    code, lines, _ = lint([str(path)], None, tmp_path)
    assert code == 1
    assert lines == [
        f"{path}: error: the action would refuse it: harness h.yaml: "
        "steer.max_steers must be at most 50, got 99 [harness-invalid]"
    ]


def test_agents_missing_the_opening_line(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    write(agents / "code.md", GOOD_AGENT)
    old = write(agents / "retro.md", OLD_AGENT)
    almost = write(agents / "fix.md", OPENING_LINE[:-1] + "\n")  # the line must be whole
    write(agents / "notes.txt", OLD_AGENT)  # only *.md are agent definitions
    code, lines, _ = lint(None, str(agents), tmp_path)
    assert code == 1
    assert [line.split(":", 1)[0] for line in lines] == [str(almost), str(old)]
    assert all(line.endswith("[agent-missing-opening-line]") for line in lines)
    assert OPENING_LINE in lines[0]


def test_clean_tree_exits_0(tmp_path: Path) -> None:
    write(tmp_path / ".fullsend/agents/code.md", GOOD_AGENT)
    write(tmp_path / ".fullsend/harness/code.yaml", "pre_script: ./pre.sh\nsteer: {enabled: true}\n")
    assert lint(None, None, tmp_path)[:2] == (0, [])


def test_missing_paths_exit_2(tmp_path: Path) -> None:
    code, lines, err = lint([str(tmp_path / "nope.yaml")], None, tmp_path)
    assert (code, lines) == (2, []) and "does not exist" in err
    code, lines, err = lint(None, str(tmp_path / "no-agents"), tmp_path)
    assert (code, lines) == (2, []) and "does not exist" in err


def test_cli_defaults_read_dot_fullsend(tmp_path: Path) -> None:
    """The subprocess, run from a repository root: ``.fullsend/harness/*.y*ml`` and ``.fullsend/agents``."""
    write(tmp_path / ".fullsend/harness/code.yaml", "pre_script: ./pre.sh\n")
    write(tmp_path / ".fullsend/harness/review.yml", "steer: {enabled: false}\nprompt: review it\n")
    write(tmp_path / ".fullsend/agents/code.md", GOOD_AGENT)
    write(tmp_path / ".fullsend/agents/retro.md", OLD_AGENT)
    proc = subprocess.run(
        [sys.executable, "-m", "fullsend", "lint"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.returncode == 1, proc.stderr
    first, second = proc.stdout.splitlines()
    assert first.startswith(".fullsend/harness/code.yaml: warning: steer.enabled: pre_script is set but")
    assert first.endswith(" [steer-enabled-unset]")
    assert second.startswith(".fullsend/agents/retro.md: warning: the definition does not contain")
    assert second.endswith(" [agent-missing-opening-line]")


def test_cli_explicit_paths_and_repeated_harness(tmp_path: Path) -> None:
    one = write(tmp_path / "a.yaml", "pre_script: x\n")
    two = write(tmp_path / "b.yaml", "pre_script: x\n")
    write(tmp_path / "agents/code.md", GOOD_AGENT)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "fullsend",
            "lint",
            "--harness",
            str(one),
            "--harness",
            str(two),
            "--agents",
            str(tmp_path / "agents"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert [line.split(":", 1)[0] for line in proc.stdout.splitlines()] == [str(one), str(two)]


# --- issue 15: nothing to check, and a file that is not a harness ---------------------------------


def test_nothing_to_check_says_where_it_looked(tmp_path: Path) -> None:
    """Exit 2 (issue 42): in CI a wrong working directory must not pass as clean."""
    code, lines, err = lint(None, None, tmp_path)
    assert (code, lines) == (2, [])
    assert err == (
        f"fullsend lint: nothing to check under {tmp_path.resolve()}: no harness file in .fullsend/harness/ "
        "(*.yaml, *.yml) and no .fullsend/agents/ directory; run it from the repository root, or name "
        "the files with --harness FILE and --agents DIR\n"
    )


@pytest.mark.parametrize(
    ("name", "text", "looks_like"),
    [
        ("ci.yml", "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n", "a GitHub workflow"),
        ("quoted-on.yml", "'on': push\n", "a GitHub workflow"),
        ("action.yml", "name: x\nruns:\n  using: docker\n  image: Dockerfile\n", "an action's metadata (action.yml)"),
    ],
)
def test_a_file_that_is_not_a_harness_exits_2(tmp_path: Path, name: str, text: str, looks_like: str) -> None:
    path = write(tmp_path / name, text)
    code, lines, err = lint([str(path)], None, tmp_path)
    assert (code, lines) == (2, [])
    assert err == (
        f"fullsend lint: {path} is not a harness: it looks like {looks_like}, and a harness has the keys "
        "post_script, pre_script, prompt, role, steer; give --harness a harness YAML (they live in "
        ".fullsend/harness/)\n"
    )


@pytest.mark.parametrize("text", ["", "jobs: 1\nprompt: review it\n", "extends: base.yaml\n"])
def test_a_harness_with_a_stray_key_is_still_a_harness(tmp_path: Path, text: str) -> None:
    """Only a file with no harness key at all and a workflow's (or action's) key is refused."""
    path = write(tmp_path / "h.yaml", text)
    code, _, err = lint([str(path)], None, tmp_path)
    assert code in (0, 1) and "is not a harness" not in err
