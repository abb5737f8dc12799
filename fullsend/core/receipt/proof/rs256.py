"""RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 8017 section 8.2.2) and the issuer's published keys (JWKS).

The receipt's proof is verified here, in the standard library: the signature ``s`` is raised to
the public exponent modulo ``n``, and the result must be, byte for byte, the one encoding of the
SHA-256 digest the scheme allows (``00 01 FF…FF 00 || DigestInfo || digest``).  Building the
expected encoding and comparing it whole, instead of parsing what the signature decrypts to, is
the verification RFC 8017 prescribes and leaves no room for the padding-parsing forgeries of
lax parsers.  No private key is ever used here (the simulator signs: ``fullsend.simulator.issuer``).
Pure: standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: DER of ``DigestInfo`` for SHA-256 (RFC 8017 section 9.2 note 1), followed by the 32-byte digest.
SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
_B64URL_RE = re.compile(r"[A-Za-z0-9_-]*")
#: A key shorter than this many bits is not a key the reader trusts.
MIN_MODULUS_BITS = 2048
#: Nor one longer than this (bounds the work a hostile key set could ask for).
MAX_MODULUS_BITS = 8192


@dataclass(frozen=True)
class RsaPublicKey:
    """An RSA public key: modulus ``n`` and exponent ``e``."""

    n: int
    e: int

    @property
    def size_bytes(self) -> int:
        """The modulus's length in bytes (``k`` of RFC 8017)."""
        return (self.n.bit_length() + 7) // 8


def b64url_decode(text: str) -> bytes | None:
    """Unpadded base64url (RFC 7515 section 2) to bytes; ``None`` for any other alphabet, padding or length."""
    if not isinstance(text, str) or not _B64URL_RE.fullmatch(text) or len(text) % 4 == 1:
        return None
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except ValueError:  # binascii.Error is one
        return None


def b64url_encode(data: bytes) -> str:
    """Bytes to unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def expected_encoding(message: bytes, size_bytes: int) -> bytes | None:
    """EMSA-PKCS1-v1_5 of SHA-256(``message``) for a ``size_bytes`` modulus; ``None`` when too short."""
    t = SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
    if size_bytes < len(t) + 11:
        return None
    return b"\x00\x01" + b"\xff" * (size_bytes - len(t) - 3) + b"\x00" + t


def verify_rs256(key: RsaPublicKey, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` is ``key``'s RS256 signature of ``message`` (RFC 8017 section 8.2.2):
    exactly ``k`` bytes, as an integer below ``n``, raised to ``e`` mod ``n`` equals the expected
    encoding.  Never raises."""
    k = key.size_bytes
    if len(signature) != k:
        return False
    s = int.from_bytes(signature, "big")
    if s >= key.n:
        return False
    expected = expected_encoding(message, k)
    if expected is None:
        return False
    return hmac.compare_digest(pow(s, key.e, key.n).to_bytes(k, "big"), expected)


def jwk_public_key(jwk: Mapping[str, Any]) -> RsaPublicKey | None:
    """The RSA key of one JWK (RFC 7517/7518): ``kty`` ``RSA``, ``n`` and ``e`` base64url
    big-endian; an ``alg`` other than ``RS256`` or a ``use`` other than ``sig``, when present,
    excludes it; a modulus outside 2048…8192 bits, an even modulus or an exponent below 3 or even
    is no key.  ``None`` for anything else."""
    if jwk.get("kty") != "RSA" or jwk.get("alg", "RS256") != "RS256" or jwk.get("use", "sig") != "sig":
        return None
    raw_n, raw_e = jwk.get("n"), jwk.get("e")
    n_bytes = b64url_decode(raw_n) if isinstance(raw_n, str) else None
    e_bytes = b64url_decode(raw_e) if isinstance(raw_e, str) else None
    if not n_bytes or not e_bytes or len(e_bytes) > 8:
        return None
    n, e = int.from_bytes(n_bytes, "big"), int.from_bytes(e_bytes, "big")
    if not MIN_MODULUS_BITS <= n.bit_length() <= MAX_MODULUS_BITS or n % 2 == 0 or e < 3 or e % 2 == 0:
        return None
    return RsaPublicKey(n, e)


def parse_jwks(document: object) -> dict[str, RsaPublicKey]:
    """The issuer's keys by key id, from its JWKS document ``{"keys": [JWK, …]}``: every entry
    with a non-empty string ``kid`` that :func:`jwk_public_key` accepts; a ``kid`` given twice is
    dropped (it names no one key).  ``{}`` for a document of another shape."""
    keys: dict[str, RsaPublicKey] = {}
    seen: set[str] = set()
    entries = document.get("keys") if isinstance(document, Mapping) else None
    for jwk in entries if isinstance(entries, list) else []:
        kid = jwk.get("kid") if isinstance(jwk, Mapping) else None
        if not isinstance(kid, str) or not kid:
            continue
        key = jwk_public_key(jwk) if kid not in seen else None
        seen.add(kid)
        if key is None:
            keys.pop(kid, None)
        else:
            keys[kid] = key
    return keys
