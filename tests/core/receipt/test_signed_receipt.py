"""The signed receipt's WIRE form (``fullsend.core.receipt.signed``): canonical bytes, audience,
the whole-body grammar, and that no reader of the unsigned marker takes it for a receipt."""

from __future__ import annotations

import hashlib
import re

from hypothesis import given
from hypothesis import strategies as st

from fullsend.core.receipt.marker import MARKER_RE, neutralize, parse_marker, whole_body_receipt
from fullsend.core.receipt.signed import (
    canonical_bytes,
    receipt_audience,
    signed_receipt_body,
    whole_body_signed_receipt,
)

PROOF = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ4In0.c2ln"


def test_canonical_bytes_are_exactly_the_documented_lines():
    assert canonical_bytes("Org/Repo", 7, 42, [1002, 1001, 1001, 0], "aaa111") == (
        b"fullsend-receipt/1\nrepository=org/repo\nitem=7\nrun=42\nconsumed=1001,1002\nhead=aaa111\n"
    )
    assert canonical_bytes("org/repo", 9, 42, [5], "not-hex") == (
        b"fullsend-receipt/1\nrepository=org/repo\nitem=9\nrun=42\nconsumed=5\nhead=\n"
    )


def test_the_audience_is_the_prefix_and_the_sha256_of_the_canonical_bytes():
    digest = hashlib.sha256(canonical_bytes("org/repo", 7, 42, [1001], "")).hexdigest()
    assert receipt_audience("org/repo", 7, 42, [1001], "") == "fullsend-receipt:" + digest
    assert receipt_audience("org/repo", 7, 42, [1001], "") != receipt_audience("org/repo", 8, 42, [1001], "")


def test_the_body_is_the_signed_marker_and_the_human_line():
    body = signed_receipt_body([1002, 1001], "aaa111", 42, PROOF)
    assert body == (
        f"<!-- fullsend:steer-signed consumed=1001,1002 head=aaa111 run=42 proof={PROOF} -->\n"
        "_The run already working on this item absorbed follow-up run(s) 1001, 1002, so a run queued for "
        "those events exits without repeating the work._"
    )
    parsed = whole_body_signed_receipt(body)
    assert parsed is not None and parsed.marker.consumed == (1001, 1002) and parsed.writer_run_id == 42
    assert parsed.proof == PROOF and parsed.lists(1002) and not parsed.lists(42)


def test_nothing_is_rendered_without_ids_a_writer_run_or_a_proof_of_the_jws_shape():
    assert signed_receipt_body([], "a", 42, PROOF) == ""
    assert signed_receipt_body([1], "a", 0, PROOF) == ""
    for proof in ("", "a.b", "a.b.c -->", "a.b.c d"):
        assert signed_receipt_body([1], "a", 42, proof) == ""


def test_an_unsigned_reader_finds_no_receipt_in_a_signed_one_and_the_signed_reader_none_in_an_unsigned():
    body = signed_receipt_body([1001], "aaa111", 42, PROOF)
    assert MARKER_RE.search(body) is None and parse_marker(body) is None  # fullsend's reader: any marker anywhere
    assert whole_body_receipt(body) is None
    assert (
        whole_body_signed_receipt("<!-- fullsend:steer consumed=1001 head=aaa111 -->\n" + body.split("\n")[1]) is None
    )


def test_the_grammar_refuses_extra_text_other_ids_and_a_proof_in_another_place():
    body = signed_receipt_body([1001], "aaa111", 42, PROOF)
    assert whole_body_signed_receipt(body + "\r\n  ") is not None
    assert whole_body_signed_receipt(body.replace("\n", "\r\n")) is not None
    assert whole_body_signed_receipt("> " + body) is None
    assert whole_body_signed_receipt(body + "\nmore") is None
    assert whole_body_signed_receipt(body.replace("run(s) 1001", "run(s) 1002")) is None
    assert whole_body_signed_receipt(body.replace("run=42 ", "")) is None
    assert whole_body_signed_receipt(body.replace(" proof=", " proof= ")) is None
    assert whole_body_signed_receipt(body.replace("run=42", "run=0")) is None
    assert whole_body_signed_receipt(body.replace("run=42", "run=99999999999999999999")) is None


def test_the_sanitizer_neutralises_the_signed_marker_as_it_does_the_others():
    body = signed_receipt_body([1001], "aaa111", 42, PROOF)
    assert neutralize(body).startswith("&lt;!-- fullsend:steer-signed")
    assert whole_body_signed_receipt(neutralize(body)) is None
    assert neutralize("<!--  FULLSEND :steer-signed x -->").startswith("&lt;")


@given(
    st.lists(st.integers(min_value=1, max_value=2**63 - 1), min_size=1, max_size=20),
    st.from_regex(re.compile(r"[0-9a-f]{0,40}"), fullmatch=True),
    st.integers(min_value=1, max_value=2**63 - 1),
)
def test_what_the_writer_renders_the_reader_reads_back(ids, head, run):
    parsed = whole_body_signed_receipt(signed_receipt_body(ids, head, run, PROOF))
    assert parsed is not None
    assert set(parsed.marker.consumed) == set(ids) and parsed.marker.head == head and parsed.writer_run_id == run
