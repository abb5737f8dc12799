"""Agent and commenter text quoted in the status comment and the step summary is inert: one test
per vector (docs/architecture.md "Status comments")."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.app.action.finish import _cell
from fullsend.core.receipt.marker import sanitize_detail
from fullsend.core.text.inert import code_span, inert, inert_block

Z = "\u200b"


def test_a_user_mention_cannot_notify() -> None:
    assert inert("ping @octocat now") == f"ping @{Z}octocat now"


def test_a_login_shown_as_a_code_span_cannot_notify_or_leave_the_span() -> None:
    assert [code_span(x) for x in ("reviewer", "@octocat", "a`b", "x\ny")] == [
        "`reviewer`",
        "`@octocat`",
        "`a'b`",
        "`x y`",
    ]


def test_a_team_mention_cannot_notify() -> None:
    assert inert("@org/security-team") == f"@{Z}org/security-team"


def test_an_inline_link_cannot_render() -> None:
    assert inert("[click](https://evil.example)") == f"[click]{Z}(https:{Z}//evil.example)"


def test_an_image_cannot_render() -> None:
    assert inert("![x](https://evil.example/p.png)") == f"![x]{Z}(https:{Z}//evil.example/p.png)"


def test_a_bare_url_cannot_autolink() -> None:
    assert inert("see https://evil.example/x") == f"see https:{Z}//evil.example/x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fixes #123", f"fixes #{Z}123"),
        ("see org/repo#45", f"see org/repo#{Z}45"),
        ("GH-12", f"GH{Z}-12"),
        ("gh-7 too", f"gh{Z}-7 too"),
        ("color #fff", "color #fff"),
        ("# heading", "# heading"),
        ("GHX-1", "GHX-1"),
    ],
    ids=["issue", "cross-repo", "gh-prefix", "gh-lower", "not-a-number", "heading", "other-prefix"],
)
def test_an_issue_reference_cannot_link_or_cross_reference(text: str, expected: str) -> None:
    assert inert(text) == expected and inert_block(text) == expected


def test_a_www_address_cannot_autolink() -> None:
    assert inert("go to WWW.evil.example") == f"go to WWW{Z}.evil.example"


def test_an_angle_autolink_or_html_tag_cannot_render() -> None:
    assert inert("<https://evil.example> <img src=x>") == f"&lt;https:{Z}//evil.example> &lt;img src=x>"


@pytest.mark.parametrize("brk", ["\n", "\r", "\r\n", "\u2028", "\u2029"])
def test_a_line_break_cannot_end_the_row_or_open_a_block(brk: str) -> None:
    gap = " " * len(brk)
    assert inert(f"oops{brk}```{brk}# heading") == f"oops{gap}```{gap}# heading"


def test_a_pipe_cannot_end_the_table_cell() -> None:
    assert inert("a | b") == "a \\| b"


def test_the_status_detail_and_the_summary_cell_are_both_inert() -> None:
    hostile = "[x](https://e.example) @octocat\n| done |"
    expected = f"[x]{Z}(https:{Z}//e.example) @{Z}octocat \\| done \\|"
    assert _cell(hostile) == expected
    assert sanitize_detail(hostile) == expected.replace("[", "&#91;")


@given(st.text(max_size=200))
def test_inert_is_idempotent_and_leaves_no_construct(text: str) -> None:
    once = inert(text)
    assert inert(once) == once
    assert "<" not in once and "](" not in once and "\n" not in once and "\r" not in once
    assert "://" not in once
    assert not re.search(r"#[0-9]", once)
