"""Marker builder/parser and the whole-body receipt grammar (docs/rules.md#receipt-lists-my-run;
strict parsing)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.receipt.marker import (
    Marker,
    build_marker,
    human_line,
    normalize_ids,
    parse_marker,
    receipt_body,
    whole_body_receipt,
)
from tests.core.receipt.receipt_forge import HUMAN, RB, M

SHA = "a" * 40


@pytest.mark.parametrize(
    ("vid", "ids", "head", "expected"),
    [
        ("V1-empty", [], "", ""),
        ("V2-head-only", [], "abc123", "<!-- fullsend:steer consumed= head=abc123 -->"),
        ("V3-no-head", [42], "", "<!-- fullsend:steer consumed=42 head= -->"),
        ("V4-sorted-dedup", [9, 3, 9, 7], "deadbeef", "<!-- fullsend:steer consumed=3,7,9 head=deadbeef -->"),
        ("V5-non-positive", [0, -1, 5], "aa", "<!-- fullsend:steer consumed=5 head=aa -->"),
        ("V6-hostile-head", [5], "--> <script>", "<!-- fullsend:steer consumed=5 head= -->"),
        ("V7-no-ids-bad-head", [], "not-a-sha", ""),
    ],
)
def test_build_marker(vid: str, ids: list[int], head: str, expected: str) -> None:
    assert build_marker(ids, head) == expected


def test_V8_status_line_is_not_a_marker() -> None:
    assert parse_marker("🤖 Finished Review · ✅ Success") is None


def test_V9_marker_between_other_markers() -> None:
    body = "<!-- fullsend:agent-status:42 -->\n<!-- fullsend:status:terminal -->\n" + M("1,2", "abc") + "\n🤖 Finished"
    assert parse_marker(body) == Marker((1, 2), "abc")


@pytest.mark.parametrize(
    ("vid", "body", "expected"),
    [
        ("V10-no-ids", M("", "abc"), Marker((), "abc")),
        ("V11-no-head", M("8", ""), Marker((8,), "")),
        ("V13-overflow-skipped", M("99999999999999999999,7", ""), Marker((7,), "")),
        ("parse-keeps-order-and-dups", M("9,3,9", "ab"), Marker((9, 3, 9), "ab")),
        ("parse-empty-fields", M(",1,,2,", ""), Marker((1, 2), "")),
        ("parse-leading-zeros", M("007", ""), Marker((7,), "")),
        ("parse-zero-skipped", M("0,5", ""), Marker((5,), "")),
        ("parse-int64-max", M("9223372036854775807", ""), Marker((9223372036854775807,), "")),
        ("parse-int64-max-plus-one", M("9223372036854775808", ""), Marker((), "")),
    ],
)
def test_parse_marker(vid: str, body: str, expected: Marker) -> None:
    assert parse_marker(body) == expected


@pytest.mark.parametrize(
    ("vid", "body"),
    [
        ("V12-no-fields", "<!-- fullsend:steer consumed -->"),
        ("missing-head", "<!-- fullsend:steer consumed=1 -->"),
        ("extra-space", "<!--  fullsend:steer consumed=1 head= -->"),
        ("upper-case", "<!-- FULLSEND:STEER consumed=1 head= -->"),
        ("escaped", "&lt;!-- fullsend:steer consumed=1 head= -->"),
        ("unicode-space", "<!--\u00a0fullsend:steer consumed=1 head= -->"),
        ("non-hex-head", "<!-- fullsend:steer consumed=1 head=xyz -->"),
        ("head-before-consumed", "<!-- fullsend:steer head=ab consumed=1 -->"),
        ("unicode-digit", "<!-- fullsend:steer consumed=\u0661 head= -->"),
    ],
)
def test_parse_rejects(vid: str, body: str) -> None:
    assert parse_marker(body) is None


def test_V13_run_zero_never_consumed() -> None:
    marker = parse_marker(M("99999999999999999999,7", ""))
    assert marker is not None and not marker.lists(0) and marker.lists(7)


def test_V14_round_trip() -> None:
    assert parse_marker(build_marker([3, 7, 9], "deadbeef")) == Marker((3, 7, 9), "deadbeef")


@pytest.mark.parametrize(
    ("run", "body", "expected"), [(9, M("3,9", ""), True), (4, M("3,9", ""), False), (9, M("", "ab"), False)]
)
def test_V15_consumed(run: int, body: str, expected: bool) -> None:
    marker = parse_marker(body)
    assert marker is not None and marker.lists(run) is expected


def test_receipt_body_wire_example() -> None:
    body = receipt_body([102, 101], "abc")
    assert body == (
        "<!-- fullsend:steer consumed=101,102 head=abc -->\n"
        "_The run already working on this item absorbed follow-up run(s) 101, 102, "
        "so a run queued for those events exits without repeating the work._"
    )
    assert receipt_body([], "abc") == "" and receipt_body([0, -1], "abc123") == ""
    assert human_line([]) == ""


# --- whole-body grammar (docs/rules.md#receipt-lists-my-run) ----------------------------------


@pytest.mark.parametrize(
    ("vid", "body", "expected"),
    [
        ("exact", RB("1700", SHA), (1700,)),
        ("crlf-break", M("1700", SHA) + "\r\n" + HUMAN.format("1700"), (1700,)),
        ("trailing-ascii-ws", RB("1700", SHA) + "\n\n \t\r\n", (1700,)),
        ("170-and-1700", RB("170,1700", SHA), (170, 1700)),
        ("same-set-unsorted-marker", M("9,3,9", SHA) + "\n" + HUMAN.format("3, 9"), (9, 3, 9)),
        ("issue-no-head", RB("42", ""), (42,)),
    ],
)
def test_whole_body_receipt_accepts(vid: str, body: str, expected: tuple[int, ...]) -> None:
    marker = whole_body_receipt(body)
    assert marker is not None and marker.consumed == expected


@pytest.mark.parametrize(
    ("vid", "body"),
    [
        ("V17-second-line-not-human", M("1234", "aaa") + "\n_absorbed_"),
        ("fenced", "quoted:\n```\n" + M("1700", SHA) + "\n```"),
        ("no-ids", M("", SHA)),
        ("no-ids-with-human", M("", SHA) + "\n" + HUMAN.format("")),
        ("upper-case", RB("1700", SHA).replace("fullsend:steer", "FULLSEND:STEER")),
        ("marker-alone", M("1700", SHA)),
        ("leading-text", "note\n" + RB("1700", SHA)),
        ("leading-space", " " + RB("1700", SHA)),
        ("text-after", RB("1700", SHA) + "\nthanks"),
        ("two-breaks", M("1700", SHA) + "\n\n" + HUMAN.format("1700")),
        ("human-lists-other-ids", M("1700", SHA) + "\n" + HUMAN.format("1699")),
        ("human-lists-extra-id", M("1700", SHA) + "\n" + HUMAN.format("1700, 1701")),
        ("human-no-space", M("1,2", SHA) + "\n" + HUMAN.format("1,2")),
        ("non-ascii-trailing-ws", RB("1700", SHA) + "\u00a0"),
        ("cr-only-break", M("1700", SHA) + "\r" + HUMAN.format("1700")),
        ("V31-absorbed", M("999,1000", "abc") + "\n_absorbed_"),
    ],
)
def test_whole_body_receipt_rejects(vid: str, body: str) -> None:
    assert whole_body_receipt(body) is None


def test_a_body_over_the_limits_is_not_a_receipt() -> None:
    ids = ",".join(str(i) for i in range(1, 1002))
    over_ids = M(ids, SHA) + "\n" + HUMAN.format(", ".join(ids.split(",")))
    assert len(over_ids.encode()) <= 65_536 and whole_body_receipt(over_ids) is None
    at_limit = ",".join(str(i) for i in range(1, 1001))
    ok = M(at_limit, SHA) + "\n" + HUMAN.format(", ".join(at_limit.split(",")))
    assert whole_body_receipt(ok) is not None
    huge = RB("1700", SHA) + " " * (200 * 1024)
    assert whole_body_receipt(huge) is None


ids_strategy = st.lists(st.integers(min_value=-5, max_value=2**63 - 1), min_size=1, max_size=20)
head_strategy = st.one_of(st.just(""), st.text(alphabet="0123456789abcdefABCDEF", min_size=1, max_size=40))


@given(ids_strategy, head_strategy)
def test_property_written_receipt_reads_back(ids: list[int], head: str) -> None:
    body = receipt_body(ids, head)
    marker = whole_body_receipt(body)
    if not normalize_ids(ids):
        assert body == "" and marker is None
    else:
        assert marker == Marker(normalize_ids(ids), head)


@given(st.text(max_size=300))
def test_property_parser_never_raises_and_only_lists_positive_int64(body: str) -> None:
    for marker in (parse_marker(body), whole_body_receipt(body)):
        assert marker is None or all(1 <= i <= 2**63 - 1 for i in marker.consumed)


@given(st.text(max_size=80), ids_strategy)
def test_property_prefixed_receipt_is_never_a_receipt(prefix: str, ids: list[int]) -> None:
    body = receipt_body(ids, "ab")
    if body and prefix:
        assert whole_body_receipt(prefix + body) is None
