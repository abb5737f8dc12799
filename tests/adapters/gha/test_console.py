"""Issue 15: the console speaks workflow commands only inside a runner.

``Console(plain=True)`` is what ``fullsend`` uses at a terminal (``GITHUB_ACTIONS`` not
``"true"``): errors and warnings are plain lines on the error stream, no ``%0A`` escapes, no
``::add-mask::`` line echoing a secret, and every registered secret is still redacted.
"""

from __future__ import annotations

import io

from fullsend.adapters.gha import Console, in_runner

TOKEN = "ghs_console-test-token-0001"  # not a token: a value to mask


def test_in_runner_only_for_github_actions_true() -> None:
    assert in_runner({"GITHUB_ACTIONS": "true"})
    assert not in_runner({}) and not in_runner({"GITHUB_ACTIONS": "false"}) and not in_runner({"CI": "true"})


def test_plain_errors_and_warnings_go_to_the_error_stream_as_text() -> None:
    out, err = io.StringIO(), io.StringIO()
    console = Console(out, plain=True, err_stream=err)
    console.mask(TOKEN)
    console.error(f"line one\nline two with {TOKEN}", title="Invalid input")
    console.warning("50% done")
    console.notice("a notice")
    console.group("Agent output")
    console.endgroup()
    console.log(f"uses {TOKEN}")
    assert err.getvalue() == "error: Invalid input: line one\nline two with ***\nwarning: 50% done\n"
    assert out.getvalue() == "notice: a notice\nAgent output\nuses ***\n"


def test_the_runner_form_is_unchanged() -> None:
    out = io.StringIO()
    console = Console(out)
    console.mask(TOKEN)
    console.error("line one\nline two", title="Invalid input")
    console.stderr_line(f"to the same stream when no error stream is given: {TOKEN}")
    assert out.getvalue().splitlines() == [
        f"::add-mask::{TOKEN}",
        "::error title=Invalid input::line one%0Aline two",
        "to the same stream when no error stream is given: ***",
    ]


def test_masked_lists_every_registered_value_longest_first_for_the_final_message() -> None:
    """The final message masks what the console masks (docs/architecture.md "Final message and
    denied tools"): ``masked`` hands those values out, empty ones never registered."""
    console = Console(io.StringIO())
    for value in ("short-secret", "", "a-much-longer-secret-value", "short-secret"):
        console.mask(value)
    assert console.masked == ("a-much-longer-secret-value", "short-secret")
