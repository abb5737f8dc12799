"""docs/rules.md#credential-removed, the pure half: which lines of a git config carry a secret."""

from __future__ import annotations

import pytest

from fullsend.core.tokens.credential import cut_secret_lines
from fullsend.core.tokens.reach import secret_forms

TOKEN = "ghs_" + "c" * 36
FORMS = secret_forms(TOKEN)
HEADER = b"AUTHORIZATION: basic " + FORMS[2]  # base64 of x-access-token:<token>


@pytest.mark.parametrize(
    ("config", "left", "cut", "stuck"),
    [
        (
            b'[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = ' + HEADER + b"\n",
            b'[core]\n\tbare = false\n[http "https://github.com/"]\n',
            1,
            0,
        ),
        (b"[core]\r\n\textraheader=" + HEADER + b"\r\n\tbare = false\r\n", b"[core]\r\n\tbare = false\r\n", 1, 0),
        (
            b'[remote "origin"]\n\turl = https://x-access-token:' + TOKEN.encode() + b"@github.com/o/r\n",
            b'[remote "origin"]\n',
            1,
            0,
        ),
        (b"[core]\n\tbare = false\n", b"[core]\n\tbare = false\n", 0, 0),
        (
            b'[http "https://' + TOKEN.encode() + b'@github.com/"]\n\tsslVerify = true\n',
            b'[http "https://' + TOKEN.encode() + b'@github.com/"]\n\tsslVerify = true\n',
            0,
            1,
        ),
        (b"# " + TOKEN.encode() + b"\n", b"# " + TOKEN.encode() + b"\n", 0, 1),
        (b"[core]\n\textra-header = " + HEADER, b"[core]\n", 1, 0),  # the last line has no line end
    ],
    ids=["checkout-v4", "crlf", "token-in-url", "nothing", "in-a-section-header", "in-a-comment", "no-final-newline"],
)
def test_only_key_value_lines_holding_a_secret_are_cut(config, left, cut, stuck):
    result = cut_secret_lines(config, FORMS)
    assert (result.left, result.cut, result.stuck) == (left, cut, stuck)


def test_no_spelling_cuts_nothing():
    config = b"[core]\n\textraheader = " + HEADER + b"\n"
    assert cut_secret_lines(config, ()).left == config
