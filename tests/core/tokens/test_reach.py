"""docs/rules.md#token-in-reach, the pure half: the spellings of a secret and the verdict."""

from __future__ import annotations

import base64

from fullsend.core.tokens.reach import ReachVerdict, ScanResult, reach_verdict, secret_forms


def test_secret_forms_cover_raw_base64_basic_header_url_and_json_spellings():
    secret = 'ab/c+d"e'
    assert secret_forms(secret) == (
        b'ab/c+d"e',
        base64.b64encode(secret.encode()),
        base64.b64encode(b'x-access-token:ab/c+d"e'),
        b"ab%2Fc%2Bd%22e",
        b'ab/c+d\\"e',
    )
    assert secret_forms("ghs_plain") == (b"ghs_plain", b"Z2hzX3BsYWlu", b"eC1hY2Nlc3MtdG9rZW46Z2hzX3BsYWlu")
    assert secret_forms("") == ()


def test_a_base64_core_finds_the_token_inside_any_base64_value():
    token = "fake-token_0123456789abcdefghijklmnopqrstuvwxyz"
    forms = secret_forms(token)
    for prefix in (b"", b"b", b"bo", b"bot:", b"x-access-token:"):
        for suffix in (b"", b"\n", b":x", b"trailing data"):
            encoded = base64.b64encode(prefix + token.encode() + suffix)
            assert any(form in encoded for form in forms), (prefix, suffix)
    other = base64.b64encode(b"bot:fake-token_9123456789abcdefghijklmnopqrstuvwxyZ")
    assert not any(form in other for form in forms)


def test_token_in_reach_no_receipt_without_isolation_a_finding_or_a_complete_scan():
    shared = reach_verdict("the action does not run as root", False, ScanResult())
    assert not shared.ok and "shares the action's uid (the action does not run as root)" in shared.why
    found = reach_verdict("", False, ScanResult((("/w/.git/config", "job token"), ("/t/x", "job token"))))
    assert not found.ok
    assert found.why.startswith("/w/.git/config holds the job token (and 1 more), readable by the agent's user")
    assert "persist-credentials: false" in found.why
    unknown = reach_verdict("", False, ScanResult((), False, "more than 3 files"))
    assert not unknown.ok and "could not finish (more than 3 files)" in unknown.why
    assert reach_verdict("", False, ScanResult()) == ReachVerdict(True)
    assert reach_verdict("no setpriv", True, ScanResult()) == ReachVerdict(True)  # the simulator seam
    assert not reach_verdict("no setpriv", True, ScanResult((("/h/f", "job token"),))).ok
