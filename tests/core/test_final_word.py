"""The agent's final message as the action gives it out, and the refused tool calls as it lists them
(docs/architecture.md "Final message and denied tools"; docs/rules.md#tool-denied)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.final_word import (
    FINAL_MESSAGE_MAX_BYTES,
    RULE_TOOL_DENIED,
    ToolDenial,
    bound_utf8,
    denial_lines,
    distinct_denials,
    final_message_value,
    mask_secrets,
    masked_denial,
    tool_input_json,
    tool_label,
)
from fullsend.core.text.inert import ZWSP as Z
from fullsend.core.text.inert import inert_block

TOKEN = "fake-final-word-token-0123456789abcdef"  # no real token shape


def test_a_short_answer_comes_back_as_it_was_written() -> None:
    assert (
        final_message_value("All done.\n\n- fixed the parser\n- added a test", ())
        == "All done.\n\n- fixed the parser\n- added a test"
    )


def test_every_known_secret_is_masked_longest_first() -> None:
    longer = f"x-access-token:{TOKEN}"
    text = f"push with {longer} or {TOKEN}"
    assert final_message_value(text, (TOKEN, longer, "")) == "push with *** or ***"


def test_a_secret_is_masked_before_the_cut_so_no_half_of_it_is_left() -> None:
    text = "a" * (FINAL_MESSAGE_MAX_BYTES - 70) + TOKEN + "b" * 100  # the cut falls inside the token
    out = final_message_value(text, (TOKEN,))
    assert TOKEN[:8] not in out and "***" in out


def test_a_long_answer_is_cut_to_the_bound_with_a_visible_marker() -> None:
    text = "é" * FINAL_MESSAGE_MAX_BYTES  # 2 bytes each: twice the bound
    out = final_message_value(text, ())
    assert len(out.encode("utf-8")) <= FINAL_MESSAGE_MAX_BYTES
    head, marker = out.split("\n… [final message truncated: ")
    assert set(head) == {"é"}  # no character cut in two
    assert marker == f"{len(head.encode())} of {2 * FINAL_MESSAGE_MAX_BYTES} bytes shown]"


@given(st.text(max_size=300), st.integers(min_value=80, max_value=400))
def test_the_bound_holds_for_any_text_and_cuts_only_between_characters(text: str, max_bytes: int) -> None:
    out = bound_utf8(text, max_bytes)
    assert len(out.encode("utf-8")) <= max_bytes
    assert out == text or text.startswith(out.split("\n… [final message truncated: ")[0])


def test_a_bound_too_small_for_the_marker_is_refused_with_the_size_to_give() -> None:
    with pytest.raises(ValueError, match="cannot hold the truncation marker; give at least"):
        bound_utf8("x" * 100, 10)


def test_links_mentions_and_tags_are_inert_and_lines_stay() -> None:
    text = "cc @octocat\r\nsee [fix](https://evil.example) and www.evil.example\n<img src=x> <!-- hi -->\n[ref]: /x"
    assert final_message_value(text, ()) == (
        f"cc @{Z}octocat\nsee [fix]{Z}(https:{Z}//evil.example) and www{Z}.evil.example\n"
        f"<{Z}img src=x> <{Z}!-- hi -->\n[ref]{Z}: /x"
    )


def test_terminal_escapes_and_control_characters_are_removed() -> None:
    assert final_message_value("\x1b[31mred\x1b[0m\x07 bell\ttab\x00", ()) == "red  bell\ttab"


@given(st.text(max_size=200))
def test_inert_block_is_idempotent(text: str) -> None:
    assert inert_block(inert_block(text)) == inert_block(text)


def test_mask_secrets_ignores_empty_values() -> None:
    assert mask_secrets("abc", ("", "")) == "abc"


def test_a_claude_permission_denial_is_listed_with_the_agent_args_that_allow_it() -> None:
    denial = ToolDenial("Bash", "toolu_1", tool_input_json({"command": "git push origin @octocat"}))
    assert denial_lines([denial]) == [
        f'`Bash` with input {{"command":"git push origin @{Z}octocat"}} — to allow it, add the lines '
        "`--allowedTools` and `Bash` to `agent_args` (and take it out of any `--disallowedTools` there)"
    ]
    assert RULE_TOOL_DENIED == "tool-denied"


def test_a_denied_input_is_masked_cut_and_kept_on_one_line() -> None:
    denial = masked_denial(ToolDenial("Write", "t", f"{TOKEN}\n" + "y" * 300), (TOKEN,))
    line = denial_lines([denial])[0]
    assert TOKEN not in line and "*** yyy" in line and "…" in line and "\n" not in line


def test_a_tool_name_that_could_break_its_code_span_is_spelled_safely() -> None:
    assert tool_label("mcp__github__create_issue") == "mcp__github__create_issue"
    assert tool_label("Bash`\n<b>") == "Bash???b?"


def test_each_refused_call_is_listed_once() -> None:
    a, b = ToolDenial("Bash", "t1", "{}"), ToolDenial("Bash", "t2", "{}")
    assert distinct_denials([a, b, a, ToolDenial("Read", "", "x"), ToolDenial("Read", "", "x")]) == (
        a,
        b,
        ToolDenial("Read", "", "x"),
    )


def test_tool_input_json_is_compact_and_stable() -> None:
    assert tool_input_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert tool_input_json(None) == "" and tool_input_json("raw") == "raw"
