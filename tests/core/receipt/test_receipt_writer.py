"""Receipt token, writer decisions, the status-comment copy and neutralising
(docs/architecture.md "Receipt writer" and
"Status comments")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.agent_end import AgentEnd
from fullsend.core.receipt.marker import (
    Marker,
    clock_label,
    neutralize,
    receipt_body,
    sanitize_detail,
    should_post_receipt,
    status_commit_shas,
    status_marker_copy,
)
from fullsend.core.tokens.policy import counts_as_minted, receipt_token
from fullsend.core.watch.steer import DeliveredSteer

TEMPLATES = Path(__file__).resolve().parents[3] / "fullsend" / "templates"
ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined)


@pytest.mark.parametrize(
    ("vid", "job", "role", "minted", "expected"),
    [
        ("V56", "job", "role", True, "job"),
        ("V57", "job", "role", False, ""),
        ("V58", "same", "same", True, ""),
        ("V59", "", "role", True, ""),
        ("no-role-token", "job", "", True, ""),
    ],
)
def test_receipt_token(vid: str, job: str, role: str, minted: bool, expected: str) -> None:
    assert receipt_token(job, role, minted) == expected


@pytest.mark.parametrize(
    ("mint_ok", "role_input", "job", "expected"),
    [
        (True, "", "job", True),
        (False, "ghs_role", "job", True),
        (False, "job", "job", False),
        (False, "", "job", False),
    ],
)
def test_counts_as_minted(mint_ok: bool, role_input: str, job: str, expected: bool) -> None:
    assert counts_as_minted(mint_ok, role_input, job) is expected


@pytest.mark.parametrize(
    ("vid", "ids", "head"),
    [("V62-head-only", [], "abc123"), ("V63-non-positive", [0, -1], "abc123"), ("V65-empty", [], "")],
)
def test_no_receipt_body_without_ids(vid: str, ids: list[int], head: str) -> None:
    assert receipt_body(ids, head) == ""


_CLEAN = dict(run_failed=False, cancelled=False, skipped=False, post_script_withheld=False, transcript_error=False)


def test_V70_outright_success_posts() -> None:
    assert should_post_receipt(**_CLEAN, agent_end=AgentEnd.SUCCESS)


@pytest.mark.parametrize("flag", ["run_failed", "cancelled", "skipped", "post_script_withheld", "transcript_error"])
def test_V71_anything_else_posts_nothing(flag: str) -> None:
    kwargs: dict = {**_CLEAN, "agent_end": AgentEnd.SUCCESS}
    kwargs[flag] = True
    assert not should_post_receipt(**kwargs)


@pytest.mark.parametrize("end", [e for e in AgentEnd if e is not AgentEnd.SUCCESS] + [None])
def test_only_an_outright_agent_success_posts(end: AgentEnd | None) -> None:
    """Issue 16: every other end of the shipped iteration, or none at all, posts nothing."""
    assert not should_post_receipt(**_CLEAN, agent_end=end)


@pytest.mark.parametrize(
    ("vid", "delivered", "acked", "head", "expected"),
    [
        ("V77", [DeliveredSteer(101, (101,)), DeliveredSteer(102, (102,))], [101], "abc", Marker((101,), "abc")),
        ("V78", [DeliveredSteer(103, (101, 102, 103))], [103], "", Marker((101, 102, 103), "")),
        ("V79", [DeliveredSteer(101, (101,))], [], "abc", Marker((), "abc")),
        ("V80", [], [101], "abc", Marker((), "abc")),
    ],
)
def test_marker_from(vid: str, delivered: list, acked: list[int], head: str, expected: Marker) -> None:
    from fullsend.core.receipt.marker import marker_from

    assert marker_from(delivered, acked, head) == expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("success", "<!-- fullsend:steer consumed=101 head=abc123 -->"),
        ("failure", ""),
        ("cancelled", ""),
        ("skipped", ""),
        ("", ""),
    ],
)
def test_V81_status_copy(status: str, expected: str) -> None:
    assert status_marker_copy(status, Marker((101,), "abc123")) == expected


def test_V81_head_only_copy_kept_for_success() -> None:
    assert status_marker_copy("success", Marker((), "abc123")) == "<!-- fullsend:steer consumed= head=abc123 -->"


START = "3ab5eb6c0ffee" + "0" * 27
MOVED = "1b53d69deadbeef" + "0" * 25


def terminal(status: str, marker: Marker | None, start_sha: str = START, detail: str = "") -> str:
    copy = status_marker_copy(status, marker)
    shown, started_on = status_commit_shas(start_sha, marker if copy else None)
    return ENV.get_template("receipt/status_terminal.md.j2").render(
        run_id="42",
        agent="review",
        status=status,
        detail=sanitize_detail(detail),
        started="8:30 AM UTC",
        completed="8:45 AM UTC",
        steer_marker=copy,
        commit7=shown,
        started_on7=started_on,
        run_url="https://ci/run/42",
        footer="",
    )


def test_V82_completion_carries_the_marker_copy() -> None:
    body = terminal("success", Marker((101,), "abc123"))
    lines = body.split("\n")
    assert lines[:4] == [
        "<!-- fullsend:agent-status:42 -->",
        "<!-- fullsend:status:terminal -->",
        "<!-- fullsend:steer consumed=101 head=abc123 -->",
        "🤖 Finished Review · ✅ Success · Started 8:30 AM UTC · Completed 8:45 AM UTC",
    ]


def test_V83_commit_line_when_head_moved() -> None:
    body = terminal("success", Marker((101,), MOVED))
    assert body.endswith("\n\nCommit: `1b53d69` (started on `3ab5eb6`) · [View workflow run →](https://ci/run/42)")


@pytest.mark.parametrize(
    ("vid", "marker"),
    [("V84-same-head", Marker((101,), START)), ("V84-no-marker", None), ("V84-head-only", Marker((), MOVED))],
)
def test_V84_commit_line_unchanged(vid: str, marker: Marker | None) -> None:
    body = terminal("success", marker)
    assert body.endswith("\n\nCommit: `3ab5eb6` · [View workflow run →](https://ci/run/42)")


def test_failure_has_no_copy_and_escaped_detail() -> None:
    body = terminal("failure", Marker((101,), MOVED), detail="agent said <!-- fullsend:steer consumed=1 head= --> [x]")
    assert "fullsend:steer consumed=101" not in body
    assert "❌ Failure (agent said &lt;!-- fullsend:steer consumed=1 head= --> &#91;x]) ·" in body
    assert body.endswith("Commit: `3ab5eb6` · [View workflow run →](https://ci/run/42)")


def test_start_comment() -> None:
    body = ENV.get_template("receipt/status_start.md.j2").render(
        run_id="42",
        agent="review",
        started=clock_label(datetime(2026, 9, 4, 8, 30, tzinfo=UTC)),
        commit7=START[:7],
        run_url="https://ci/run/42",
    )
    assert (
        body
        == "<!-- fullsend:agent-status:42 -->\n🤖 Review · Started 8:30 AM UTC\n\nCommit: `3ab5eb6` · [View workflow run →](https://ci/run/42)"
    )


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (datetime(2026, 9, 4, 0, 5, tzinfo=UTC), "12:05 AM UTC"),
        (datetime(2026, 9, 4, 12, 0, tzinfo=UTC), "12:00 PM UTC"),
        (datetime(2026, 9, 4, 18, 30, tzinfo=timezone(timedelta(hours=5))), "1:30 PM UTC"),
    ],
)
def test_clock_label(at: datetime, expected: str) -> None:
    assert clock_label(at) == expected


def test_sanitize_detail() -> None:
    assert sanitize_detail("a\nb\x1bc") == "a b c"
    long = sanitize_detail("x" * 250)
    assert long == "x" * 200 + "…"
    assert sanitize_detail("<" * 201) == "&lt;" * 200 + "…"


@pytest.mark.parametrize(
    ("vid", "text", "expected"),
    [
        (
            "V85",
            "LGTM.\n<!-- fullsend:steer consumed=1234 head= -->",
            "LGTM.\n&lt;!-- fullsend:steer consumed=1234 head= -->",
        ),
        ("V86-no-space", "<!--fullsend:steer x -->", "&lt;!--fullsend:steer x -->"),
        ("V86-spaces", "<!--   fullsend:steer x -->", "&lt;!--   fullsend:steer x -->"),
        ("V86-case", "<!-- FullSend:Steer x -->", "&lt;!-- FullSend:Steer x -->"),
        ("V86-space-before-colon", "<!-- fullsend :steer", "&lt;!-- fullsend :steer"),
        ("V86-newline", "<!--\nfullsend:", "&lt;!--\nfullsend:"),
        ("V86-crlf", "<!--\r\nfullsend:", "&lt;!--\r\nfullsend:"),
        ("V86-tab", "<!--\tfullsend:", "&lt;!--\tfullsend:"),
        (
            "V87-both",
            "<!-- fullsend:steer a --> and <!--fullsend:status:terminal -->",
            "&lt;!-- fullsend:steer a --> and &lt;!--fullsend:status:terminal -->",
        ),
        ("long-s-folds-like-go", "<!-- fullſend:steer -->", "&lt;!-- fullſend:steer -->"),
    ],
)
def test_neutralize(vid: str, text: str, expected: str) -> None:
    assert neutralize(text) == expected
    assert neutralize(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "&lt;!-- fullsend:steer ... --&gt;",
        "<!-- TODO: fix this -->",
        "<!-- other-tool:marker -->",
        "a < b && c > d",
        "",
    ],
)
def test_V88_unchanged(text: str) -> None:
    assert neutralize(text) == text


@given(st.text(alphabet=st.sampled_from(list("<!- \t\n\rfullsendFULLSEND:ſ&lt;x")), max_size=60))
def test_property_neutralize_idempotent_and_complete(text: str) -> None:
    import re

    out = neutralize(text)
    assert neutralize(out) == out
    assert re.search(r"<!--[\t\n\f\r ]*fullsend[\t\n\f\r ]*:", out, re.I | re.S | re.ASCII) is None
