"""The OIDC issuer's published keys, read for the receipt's proof (docs/rules.md "Receipt proof").

One GET of ``<issuer>/.well-known/jwks`` through the one HTTP client (``Client.get``: its proxies
and CA bundle), with no ``Authorization`` header: the key host never sees a token.  The URL is configuration
(``fullsend.core.receipt.proof.issuer``), never a token's word.  What the keys are is core's to
read (``fullsend.core.receipt.proof.rs256.parse_jwks``).
"""

from __future__ import annotations

import json
from typing import Any

from fullsend.adapters.github.client import Client, SendFailed
from fullsend.errors import ForgeError, MalformedResponse

ENDPOINT = "GET <issuer>/.well-known/jwks"


def read_issuer_keys(client: Client, url: str, timeout_s: float) -> dict[str, Any]:
    """The JSON object ``url`` answers with 200.  Raises ``ForgeError`` for no answer or another
    status, ``MalformedResponse`` for a body that is not a JSON object; never retries (the reader
    reads the keys at most twice a run)."""
    try:
        answer = client.send("GET", url, {"Accept": "application/json"}, None, timeout_s)
    except SendFailed as exc:
        raise ForgeError(f"{ENDPOINT}: no answer ({exc})") from None
    if answer.status != 200:
        raise ForgeError(f"{ENDPOINT}: HTTP {answer.status}", status=answer.status)
    try:
        data = json.loads(answer.text)
    except ValueError:
        raise MalformedResponse(ENDPOINT, "", "not JSON", answer.status) from None
    if not isinstance(data, dict):
        raise MalformedResponse(ENDPOINT, "", "not a JSON object", answer.status)
    return data
