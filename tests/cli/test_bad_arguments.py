"""Issue 15: every CLI error for a person at a terminal is one plain line naming the value.

Each subcommand (``run``, ``demo``, ``steer``, ``lint``, ``explain``, ``simulator serve``) gets a
table of bad arguments, run as a person runs it: ``python -m fullsend …`` with ``GITHUB_ACTIONS``
unset.  Each must exit 2 with exactly one line on standard error, ``fullsend <command>: …``,
naming the bad value or path (and no workflow command, no ``%0A``, no traceback anywhere).
Inside a runner (``GITHUB_ACTIONS=true``) the same error is one ``::error::`` line instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = REPO_ROOT / "examples" / "fullsend.yml"
PR_URL = "https://github.com/org/repo/pull/7"

#: (id, argv after ``fullsend``, extra environment, what the one line must name).  ``{tmp}`` is
#: replaced by a temporary directory holding ``bad.yml`` (broken YAML) and ``binary.md``.
CASES: list[tuple[str, list[str], dict[str, str], str]] = [
    ("no-command", [], {}, "command"),
    ("unknown-command", ["deploy"], {}, "'deploy'"),
    ("run-stage", ["run"], {"INPUT_STAGE": "bogus"}, "'bogus'"),
    ("run-runtime", ["run"], {"INPUT_STAGE": "review", "INPUT_RUNTIME": "gpt"}, "'gpt'"),
    ("run-item", ["run"], {"INPUT_STAGE": "review", "INPUT_ITEM": "seven"}, "'seven'"),
    ("run-max-steers", ["run"], {"INPUT_STAGE": "review", "INPUT_MAX_STEERS": "99"}, "'99'"),
    ("run-repository", ["run"], {"INPUT_STAGE": "review", "GITHUB_REPOSITORY": "norepo"}, "'norepo'"),
    ("run-api-url", ["run"], {"INPUT_STAGE": "review", "GITHUB_API_URL": "api.github.com"}, "'api.github.com'"),
    (
        "run-prompt-file",
        ["run"],
        {
            "INPUT_STAGE": "review",
            "GITHUB_REPOSITORY": "org/repo",
            "INPUT_ITEM": "7",
            "GITHUB_WORKSPACE": "{tmp}",
            "INPUT_PROMPT_FILE": "task.md",
        },
        "'task.md' cannot be read as {tmp}/task.md (No such file or directory)",
    ),
    (
        "run-prompt-file-binary",
        ["run"],
        {
            "INPUT_STAGE": "review",
            "GITHUB_REPOSITORY": "org/repo",
            "INPUT_ITEM": "7",
            "GITHUB_WORKSPACE": "{tmp}",
            "INPUT_PROMPT_FILE": "binary.md",
        },
        "'binary.md' ({tmp}/binary.md) is not UTF-8 text",
    ),
    ("demo-negative", ["demo", "--turn-seconds", "-1"], {}, "'-1'"),
    ("demo-nan", ["demo", "--turn-seconds", "nan"], {}, "'nan'"),
    ("demo-too-short", ["demo", "--turn-seconds", "0.5"], {}, "'0.5'"),
    ("demo-word", ["demo", "--turn-seconds", "soon"], {}, "'soon'"),
    ("steer-not-a-url", ["steer", "not a url", "x"], {}, "'not a url'"),
    ("steer-no-item", ["steer", "https://github.com/org/repo", "x"], {}, "'https://github.com/org/repo'"),
    ("steer-stage", ["steer", PR_URL, "x", "--stage", "deploy"], {}, '"deploy"'),
    ("steer-stage-code", ["steer", PR_URL, "x", "--stage", "code"], {}, "'/fs-code <text>'"),
    ("lint-missing-harness", ["lint", "--harness", "{tmp}/missing.yaml"], {}, "{tmp}/missing.yaml"),
    ("lint-workflow", ["lint", "--harness", str(WORKFLOW)], {}, f"{WORKFLOW} is not a harness"),
    ("lint-missing-agents", ["lint", "--agents", "{tmp}/agents"], {}, "{tmp}/agents"),
    ("explain-not-a-url", ["explain", "ftp://example.com/x"], {}, "'ftp://example.com/x'"),
    ("explain-run", ["explain", PR_URL, "--run", "abc"], {}, "'abc'"),
    ("explain-as-of", ["explain", PR_URL, "--as-of", "yesterday"], {}, "'yesterday'"),
    ("explain-issuer", ["explain", PR_URL, "--receipt-issuer", "ftp://user@x"], {}, "'ftp://user@x'"),
    ("report-issuer", ["report", "org/repo", "--receipt-issuer", "http://issuer.example"], {}, "http://issuer"),
    ("serve-port-high", ["simulator", "serve", "--port", "99999"], {}, "'99999'"),
    ("serve-port-negative", ["simulator", "serve", "--port", "-1"], {}, "'-1'"),
    ("serve-port-word", ["simulator", "serve", "--port", "http"], {}, "'http'"),
    (
        "serve-scenario-missing",
        ["simulator", "serve", "--port", "0", "--scenario", "{tmp}/none.yml"],
        {},
        "{tmp}/none.yml: cannot be read (No such file or directory)",
    ),
    (
        "serve-scenario-yaml",
        ["simulator", "serve", "--port", "0", "--scenario", "{tmp}/bad.yml"],
        {},
        "{tmp}/bad.yml: not valid YAML or JSON at line 2, column 3",
    ),
    ("serve-no-subcommand", ["simulator"], {}, "simulator_command"),
]


def fullsend(argv: list[str], env: dict[str, str], *, runner: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m fullsend argv`` at a terminal (no ``GITHUB_*``/``INPUT_*``/token variables)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GH_", "ACTIONS_"))}
    full = {**base, **env, **({"GITHUB_ACTIONS": "true"} if runner else {})}
    return subprocess.run(
        [sys.executable, "-m", "fullsend", *argv],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=env.get("GITHUB_WORKSPACE"),
    )


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "bad.yml").write_text("timeline: [\n  - do: x\n")
    (tmp_path / "binary.md").write_bytes(b"\xff\xfe\x00 not text")
    return tmp_path


def _fill(value: str, tmp: Path) -> str:
    return value.replace("{tmp}", str(tmp))


@pytest.mark.parametrize(("argv", "env", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_argument_is_exit_2_and_one_plain_line_naming_it(
    tmp: Path, argv: list[str], env: dict[str, str], named: str
) -> None:
    proc = fullsend([_fill(a, tmp) for a in argv], {k: _fill(v, tmp) for k, v in env.items()})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("fullsend"), lines[0]
    assert _fill(named, tmp) in lines[0]
    for text in (proc.stdout, proc.stderr):
        assert "Traceback" not in text and "::error" not in text and "%0A" not in text


def test_inside_a_runner_the_same_error_is_one_workflow_command(tmp: Path) -> None:
    proc = fullsend(["run"], {"INPUT_STAGE": "bogus"}, runner=True)
    assert proc.returncode == 2
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error")]
    assert errors == [
        "::error title=Invalid input::input 'stage': 'bogus' is not one of the allowed values. "
        "Set 'stage' to one of: triage, code, review, fix, retro, prioritize."
    ]
    assert "Traceback" not in proc.stdout + proc.stderr


def test_at_a_terminal_an_input_error_says_which_variable_holds_it() -> None:
    proc = fullsend(["run"], {"INPUT_STAGE": "review", "INPUT_RUNTIME": "gpt"})
    assert proc.stderr == (
        "fullsend run: input 'runtime': 'gpt' is not one of the allowed values. Set 'runtime' to one of: claude, pi, "
        "codex, or leave it empty for claude. (Outside a workflow this input is INPUT_RUNTIME; see "
        "'fullsend run --help'.)\n"
    )


def test_the_turn_and_port_bounds_are_inclusive() -> None:
    import argparse

    from fullsend.app.commands.parser import port_number, turn_seconds

    assert (turn_seconds("1"), turn_seconds("60"), port_number("0"), port_number("65535")) == (1.0, 60.0, 0, 65535)
    for bad_turn in ("0.99", "60.5", "-0"):
        with pytest.raises(argparse.ArgumentTypeError):
            turn_seconds(bad_turn)
    with pytest.raises(argparse.ArgumentTypeError):
        port_number("65536")
