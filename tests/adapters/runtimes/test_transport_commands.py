"""In-sandbox launch scripts as data (docs/architecture.md "Runtimes")."""

from __future__ import annotations

import subprocess

import pytest

from fullsend.adapters.runtimes.launch import claude_command, codex_args, codex_command, pi_command

SESSION = "01a06800-0000-7000-8000-0000000000ab"
CLAUDE_FEEDER = (
    '{ unset -f tail echo wait; PATH="$FULLSEND_STEER_PATH" tail -n +1 -f '
    "'/sandbox/claude-config/steer-inbox.ndjson' &"
)
PI_FEEDER = (
    "{ unset -f tail echo wait; PATH=\"$FULLSEND_STEER_PATH\" tail -n +1 -f '/sandbox/pi-config/steer-inbox.ndjson' &"
)


def _steer_claude(prompt: str = "Run the agent task") -> str:
    return claude_command(["--model", "claude-sonnet-4-5", "--dangerously-skip-permissions"], prompt, True)


def _plain_claude(prompt: str = "Run the agent task") -> str:
    return claude_command(["--model", "claude-sonnet-4-5", "--dangerously-skip-permissions"], prompt, False)


@pytest.mark.parametrize(
    "script",
    [
        _steer_claude(),
        _plain_claude(),
        pi_command([], SESSION, "p"),
        pi_command([], "", "p"),
        codex_command([], "prompt"),
        codex_command([], "envelope", "01a066e2"),
    ],
    ids=["claude-steer", "claude-plain", "pi-steer", "pi-plain", "codex", "codex-resume"],
)
def test_scripts_are_valid_sh(script: str) -> None:
    assert subprocess.run(["/bin/sh", "-n", "-c", script]).returncode == 0


def test_v20_claude_steerable_command() -> None:
    cmd = _steer_claude()
    assert CLAUDE_FEEDER in cmd
    assert "echo $! > '/sandbox/claude-config/steer-feeder.pid'" in cmd
    assert 'wait ; } | "$FULLSEND_CLAUDE_BIN"' in cmd
    assert "--input-format stream-json" in cmd and "--replay-user-messages" in cmd
    assert "Run the agent task" not in cmd


def test_v21_claude_loader_unset_order() -> None:
    cmd = _steer_claude()
    unset = "unset NODE_OPTIONS NODE_PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT"
    assert cmd.index(". /sandbox/workspace/.env") < cmd.index(unset) < cmd.index("{ unset -f tail")
    assert unset not in _plain_claude()


def test_v22_prompt_never_in_steerable_command() -> None:
    assert "SECRETMARKER" not in _steer_claude("previous iteration failed: SECRETMARKER")


def test_v23_plain_claude_command() -> None:
    cmd = _plain_claude()
    for absent in ("tail -n +1 -f", "--input-format", "--replay-user-messages", "steer-inbox.ndjson"):
        assert absent not in cmd
    assert cmd.endswith("'Run the agent task'")


def test_v47_path_pin_before_env_and_feeder_after() -> None:
    cmd = _steer_claude()
    pin = 'readonly FULLSEND_STEER_PATH="$PATH"'
    assert cmd.index(pin) < cmd.index(". /sandbox/workspace/.env") < cmd.index("tail -n +1 -f")
    assert 'PATH="$FULLSEND_STEER_PATH" tail -n +1 -f' in cmd
    assert cmd.index("unset -f tail echo wait") < cmd.index("tail -n +1 -f")
    plain = _plain_claude()
    assert pin not in plain and "tail -n +1 -f" not in plain


def test_v48_binary_pin() -> None:
    cmd = _steer_claude()
    pin = 'readonly FULLSEND_CLAUDE_BIN="$(command -v claude)"'
    assert cmd.index(pin) < cmd.index(". /sandbox/workspace/.env")
    assert '| "$FULLSEND_CLAUDE_BIN"' in cmd and "} | claude" not in cmd


def test_v49_pi_steerable_command() -> None:
    cmd = pi_command(["--model", "fake/m1"], SESSION, "Run the agent task")
    assert PI_FEEDER in cmd and "echo $! > '/sandbox/pi-config/steer-feeder.pid'" in cmd
    assert "--mode rpc" in cmd and f"--session-id '{SESSION}'" in cmd
    for absent in ("--print", "--mode json", "</dev/null", "Run the agent task"):
        assert absent not in cmd
    for kept in (
        '"$FULLSEND_PI_BIN"',
        "--session-dir ",
        "--no-approve",
        "--no-extensions",
        "export PI_CODING_AGENT_DIR=",
        "/sandbox/pi-config",
    ):
        assert kept in cmd


def test_v50_pi_unset_order() -> None:
    cmd = pi_command([], SESSION, "p")
    unset = "unset LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT"
    assert cmd.index("&& . '/sandbox/workspace/.env'") < cmd.index(unset) < cmd.index("{ unset -f tail")
    assert unset not in pi_command([], "", "p")


def test_v51_empty_session_id_gives_the_ordinary_launch() -> None:
    plain = pi_command(["--model", "fake/m1"], "", "Run the agent task")
    assert "</dev/null" in plain
    for absent in ("--mode rpc", "tail", "--session-id"):
        assert absent not in plain
    assert plain.endswith("'Run the agent task' </dev/null")


def test_v78_codex_resume_command() -> None:
    cmd = codex_command(["--model", "gpt-fake"], "the steer envelope", "01a066e2")
    resume_at = cmd.index(" resume '01a066e2'")
    assert cmd.endswith(" -")
    assert cmd.index("-C ") < resume_at
    assert "the steer envelope" not in cmd[resume_at:]
    assert "printf '%s' 'the steer envelope'" in cmd
    zero = codex_command(["--model", "gpt-fake"], "Run the agent task")
    assert " resume " not in zero and zero.endswith(" -")
    assert zero == codex_command(["--model", "gpt-fake"], "Run the agent task", "")


def test_codex_args_flags_precede_resume() -> None:
    args = codex_args(["--model", "m", "-c", "k=v"], "/repo", "/cfg/last.txt", "tid-1")
    assert args[-3:] == ["resume", "tid-1", "-"]
    assert args.index("-C") < args.index("resume") and args.index("-o") < args.index("resume")
    assert codex_args([], "/repo", "/cfg/last.txt")[-1] == "-"
