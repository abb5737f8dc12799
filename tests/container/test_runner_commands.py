"""The runner-log reader used by the hygiene tests sees what the runner would see (so a test that
finds no injected command is not blind): GitHub's workflow-command and escaping rules."""

from __future__ import annotations

from tests.container.runner_commands import parse_output_file, read_step_log
from tests.doubles.hostile_agent import HOSTILE_LINES, MARK


def test_unwrapped_agent_lines_would_be_commands():
    log = read_step_log("\n".join(HOSTILE_LINES))
    assert log.set_outputs == {"x": "y", "outcome": MARK, "steers": MARK}
    assert log.masks == {"Review", MARK}
    assert [c.name for c in log.annotations] == ["error", "error", "warning", "notice", "error"]
    assert dict(log.annotations[1].props) == {"file": "action.yml", "line": "1", "title": MARK}
    # after the agent's own ::stop-commands::agent-token … ::agent-token:: the legacy forms count
    assert [(c.name, c.props, c.message) for c in log.commands[-2:]] == [
        ("set-output", (("name", "steers"),), MARK),
        ("error", (), MARK),
    ]


def test_stop_commands_switches_everything_off_until_its_token():
    token = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"  # tokens may start with a digit
    text = "\n".join(
        [
            "::add-mask::secret",
            f"::stop-commands::{token}",
            *HOSTILE_LINES,
            f"::{token}::",
            "::error::after%0Athe block",
        ]
    )
    log = read_step_log(text)
    assert [(c.name, c.message) for c in log.commands] == [("add-mask", "secret"), ("error", "after\nthe block")]


def test_output_file_forms():
    text = "a=1\nb<<ghadelimiter_1\nline one\nline=two\nghadelimiter_1\nc=\n"
    assert parse_output_file(text) == {"a": "1", "b": "line one\nline=two", "c": ""}
