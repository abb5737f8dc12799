"""The receipt's proof as a JSON Web Token: the compact JWS form split and decoded (RFC 7515 section 7.1).

Nothing here decides whether the token is good (``fullsend.core.receipt.proof.verify`` does); a
token that cannot be read as three base64url parts, a JSON object header and a JSON object
payload, each key once, is ``None``.  Pure: standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fullsend.core.receipt.proof.rs256 import b64url_decode, b64url_encode

#: A proof longer than this is not read (GitHub's tokens are about 1.5 KiB).
MAX_TOKEN_CHARS = 16_384


@dataclass(frozen=True)
class Jwt:
    """A decoded compact JWS: its ``header`` and ``claims`` (JSON objects), the ``signing_input``
    (the first two parts as written, ASCII) and the raw ``signature`` bytes."""

    header: dict[str, Any]
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _json_object(part: str) -> dict[str, Any] | None:
    raw = b64url_decode(part)
    if raw is None:
        return None
    try:
        value = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def decode_jwt(token: str) -> Jwt | None:
    """The parts of a compact JWS ``header.payload.signature``, or ``None`` when it is longer than
    :data:`MAX_TOKEN_CHARS`, has another number of parts, a part that is not unpadded base64url,
    a header or payload that is not a JSON object (a key given twice included), or an empty
    signature."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        return None
    parts = token.split(".")
    if len(parts) != 3:
        return None
    header, claims, signature = _json_object(parts[0]), _json_object(parts[1]), b64url_decode(parts[2])
    if header is None or claims is None or not signature:
        return None
    return Jwt(header, claims, f"{parts[0]}.{parts[1]}".encode("ascii"), signature)


def encode_segment(value: dict[str, Any]) -> str:
    """One JWS segment: compact JSON (no spaces, keys in insertion order), base64url."""
    return b64url_encode(json.dumps(value, separators=(",", ":")).encode("utf-8"))
