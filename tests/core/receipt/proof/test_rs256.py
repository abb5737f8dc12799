"""RS256 verification in the standard library (``fullsend.core.receipt.proof.rs256``), checked
against OpenSSL both ways: what OpenSSL signs verifies, what the simulator signs OpenSSL accepts,
and any change to message, signature or padding fails."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fullsend.core.receipt.proof.rs256 import (
    RsaPublicKey,
    b64url_decode,
    b64url_encode,
    expected_encoding,
    jwk_public_key,
    parse_jwks,
    verify_rs256,
)
from fullsend.simulator.issuer import CURRENT_KEY, PREVIOUS_KEY, STRANGER_KEY, sign_rs256
from tests.support.tools import missing_tool

KEY = CURRENT_KEY.public


def _pem(tmp_path, key):
    """The key pair as a PEM file OpenSSL reads (from its numbers, through an ASN.1 definition)."""
    p, q = _factor(key)
    conf = tmp_path / "key.asn1"
    d = key.d
    conf.write_text(
        "asn1=SEQUENCE:rsa\n[rsa]\nversion=INTEGER:0\n"
        f"n=INTEGER:{key.n:#x}\ne=INTEGER:{key.e:#x}\nd=INTEGER:{d:#x}\np=INTEGER:{p:#x}\nq=INTEGER:{q:#x}\n"
        f"dp=INTEGER:{d % (p - 1):#x}\ndq=INTEGER:{d % (q - 1):#x}\nqi=INTEGER:{pow(q, -1, p):#x}\n"
    )
    der = tmp_path / "key.der"
    subprocess.run(["openssl", "asn1parse", "-genconf", str(conf), "-out", str(der), "-noout"], check=True)
    pem = tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "rsa", "-inform", "DER", "-in", str(der), "-out", str(pem)], check=True, capture_output=True
    )
    return pem


def _factor(key):
    """p and q from n, e, d (the standard randomized algorithm; deterministic bases suffice)."""
    k = key.e * key.d - 1
    t = k
    while t % 2 == 0:
        t //= 2
    for g in range(2, 200):
        x = pow(g, t, key.n)
        while True:
            y = pow(x, 2, key.n)
            if y == 1 and x not in (1, key.n - 1):
                from math import gcd

                p = gcd(x - 1, key.n)
                return p, key.n // p
            if y == 1:
                break
            x = y
    raise AssertionError("no factor")


@pytest.fixture
def openssl():
    if shutil.which("openssl") is None:
        missing_tool("openssl", "apt-get install -y openssl")
    return "openssl"


def test_what_openssl_signs_verifies_and_what_the_simulator_signs_openssl_accepts(tmp_path, openssl):
    pem = _pem(tmp_path, CURRENT_KEY)
    message = tmp_path / "m"
    message.write_bytes(b"eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJmdWxsc2VuZC1yZWNlaXB0In0")
    signature = subprocess.run(
        [openssl, "dgst", "-sha256", "-sign", str(pem), str(message)], check=True, capture_output=True
    ).stdout
    assert verify_rs256(KEY, message.read_bytes(), signature)
    assert signature == sign_rs256(CURRENT_KEY, message.read_bytes())  # PKCS#1 v1.5 is deterministic
    ours = tmp_path / "sig"
    ours.write_bytes(sign_rs256(CURRENT_KEY, b"another message"))
    message.write_bytes(b"another message")
    pub = tmp_path / "pub.pem"
    subprocess.run([openssl, "rsa", "-in", str(pem), "-pubout", "-out", str(pub)], check=True, capture_output=True)
    checked = subprocess.run(
        [openssl, "dgst", "-sha256", "-verify", str(pub), "-signature", str(ours), str(message)], capture_output=True
    )
    assert checked.returncode == 0 and b"Verified OK" in checked.stdout


def test_a_changed_message_another_key_or_a_wrong_length_fails():
    sig = sign_rs256(CURRENT_KEY, b"message")
    assert verify_rs256(KEY, b"message", sig)
    assert not verify_rs256(KEY, b"messagE", sig)
    assert not verify_rs256(PREVIOUS_KEY.public, b"message", sig)
    assert not verify_rs256(KEY, b"message", sig[1:])
    assert not verify_rs256(KEY, b"message", b"\x00" + sig)
    assert not verify_rs256(KEY, b"message", KEY.n.to_bytes(256, "big"))  # s >= n


def test_a_signature_decrypting_to_lax_padding_is_refused():
    """Bleichenbacher's 2006 forgery relies on parsers that stop after the digest: the encoding
    is compared whole, so anything but the one encoding fails (built here with the private key)."""
    k = KEY.size_bytes
    good = expected_encoding(b"m", k)
    assert good is not None
    for bad in (
        good[:-1] + bytes([good[-1] ^ 1]),  # another digest
        b"\x00\x01" + b"\xff" * 8 + b"\x00" + good[-51:] + b"\x00" * (k - 62),  # garbage after the digest
        b"\x00\x02" + good[2:],  # encryption block type
    ):
        forged = pow(int.from_bytes(bad, "big"), CURRENT_KEY.d, CURRENT_KEY.n).to_bytes(k, "big")
        assert not verify_rs256(KEY, b"m", forged)


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=255), st.integers(min_value=0, max_value=255))
def test_any_one_changed_byte_of_the_signature_fails(message, index, flip):
    sig = bytearray(sign_rs256(STRANGER_KEY, message))
    sig[index] ^= flip or 1
    assert not verify_rs256(STRANGER_KEY.public, message, bytes(sig))


def test_jwks_entries_are_keys_only_when_they_are_rs256_signing_keys_of_a_fair_size():
    jwk = CURRENT_KEY.jwk()
    assert jwk_public_key(jwk) == KEY
    assert jwk_public_key({**jwk, "alg": "RS512"}) is None
    assert jwk_public_key({**jwk, "use": "enc"}) is None
    assert jwk_public_key({**jwk, "kty": "EC"}) is None
    assert jwk_public_key({**jwk, "e": "Ag"}) is None  # e = 2
    small = RsaPublicKey(KEY.n >> 1100, 65537)
    assert jwk_public_key({**jwk, "n": b64url_encode(small.n.to_bytes(small.size_bytes, "big"))}) is None
    assert jwk_public_key({**jwk, "n": jwk["n"] + "="}) is None  # padded base64url is not base64url


def test_parse_jwks_keeps_each_key_id_once_and_drops_one_given_twice():
    doc = {
        "keys": [CURRENT_KEY.jwk(), PREVIOUS_KEY.jwk(), {**STRANGER_KEY.jwk(), "kid": PREVIOUS_KEY.kid}, {"kid": ""}]
    }
    assert parse_jwks(doc) == {CURRENT_KEY.kid: KEY}
    assert parse_jwks({"keys": "no"}) == {} and parse_jwks([]) == {} and parse_jwks(None) == {}


def test_base64url_is_strict():
    assert b64url_decode("AQAB") == b"\x01\x00\x01"
    assert b64url_decode("-_8") == b"\xfb\xff"
    for bad in ("AQAB=", "A", "a+b/", "é", "AQ AB"):
        assert b64url_decode(bad) is None
