"""The ``agent_args`` input (issue 21 B): one argument per line, the action's own flags refused."""

from __future__ import annotations

import pytest

from fullsend.core.agent_args import owned_flags_in, split_agent_args
from fullsend.errors import InputError
from fullsend.settings import load_inputs


def test_one_argument_per_line_blank_lines_dropped():
    text = "--allowedTools\n  Read,Grep,Bash(git diff:*)  \n\n--max-turns\n20\n"
    assert split_agent_args(text) == ("--allowedTools", "Read,Grep,Bash(git diff:*)", "--max-turns", "20")


@pytest.mark.parametrize(
    ("runtime", "args", "owned"),
    [
        (
            "claude",
            ("-p", "--output-format=json", "--max-turns", "3", "--resume", "x"),
            ["-p", "--output-format", "--resume"],
        ),
        ("claude", ("--mcp-config", ".fullsend/mcp.json", "--append-system-prompt", "Be brief"), []),
        ("pi", ("--mode", "json", "--session-id", "x", "--provider", "openai"), ["--mode", "--session-id"]),
        ("codex", ("--profile", "ci", "--json"), ["--json"]),
        ("codex", ("resume", "--last"), ["resume", "--last"]),
    ],
)
def test_the_flags_the_action_owns_are_found_per_runtime(runtime, args, owned):
    assert owned_flags_in(args, runtime) == owned


def test_an_owned_flag_is_an_input_error_naming_agent_args():
    env = {"INPUT_STAGE": "review", "INPUT_RUNTIME": "claude", "INPUT_AGENT_ARGS": "--max-turns\n5\n--session-id=abc"}
    with pytest.raises(InputError) as caught:
        load_inputs(env)
    assert caught.value.input_name == "agent_args"
    assert "--session-id" in caught.value.problem and "abc" not in str(caught.value)


def test_agent_args_are_read_as_lines():
    env = {"INPUT_STAGE": "review", "INPUT_RUNTIME": "codex", "INPUT_AGENT_ARGS": "--profile\nci\n"}
    assert load_inputs(env).agent_args == ("--profile", "ci")
    assert load_inputs({"INPUT_STAGE": "review", "INPUT_AGENT_ARGS": ""}).agent_args == ()
