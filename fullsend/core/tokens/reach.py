"""Whether the job token stayed out of the agent's reach (docs/rules.md#token-in-reach).

A receipt lets a queued run skip, so it is a claim only the action may make: an agent that can
read the job token (or the runner's OIDC request token, which mints tokens) could post one that
names a run it never absorbed.  The action therefore posts a receipt only with proof, taken
before the agent starts, that (a) the children run under a uid of their own and (b) no file
that uid can read holds a secret in a spelling :func:`secret_forms` lists (the scan's limits:
``fullsend.adapters.confinement.reach``)
(docs/architecture.md "Tokens").  Pure: the scan that feeds :func:`reach_verdict` lives in
``fullsend.adapters.confinement.reach``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

#: A secret within the agent's reach (or no proof that it is not): no receipt.
RULE_TOKEN_IN_REACH = "token-in-reach"


#: Base64 cores shorter than this are left out: too short to name one secret.
MIN_CORE_CHARS = 16


def secret_forms(secret: str) -> tuple[bytes, ...]:
    """Every spelling of ``secret`` a file could hold, as bytes, each once: raw, base64 of the
    secret, base64 of ``x-access-token:<secret>`` (actions/checkout's Basic header), URL-encoded,
    JSON-escaped, and the base64 core of the secret at each of the three alignments (so it is
    found whatever precedes or follows it inside a base64 value, e.g. ``user:<secret>`` in a
    Docker ``auth``).  ``()`` for an empty secret."""
    if not secret:
        return ()
    forms = [
        secret,
        base64.b64encode(secret.encode()).decode(),
        base64.b64encode(f"x-access-token:{secret}".encode()).decode(),
        quote(secret, safe=""),
        json.dumps(secret)[1:-1],
        *base64_cores(secret.encode()),
    ]
    return tuple(dict.fromkeys(form.encode() for form in forms))


def base64_cores(data: bytes) -> list[str]:
    """For each offset 0, 1, 2 of ``data`` in a longer byte string, the base64 characters that
    depend on ``data`` alone: the encoding without its first group (which also holds the bytes
    before it; kept at offset 0) and its last group (which may hold the bytes after it)."""
    cores = []
    for offset in range(3):
        text = base64.b64encode(b"\0" * offset + data).decode()
        core = text[4 if offset else 0 : -4]
        if len(core) >= MIN_CORE_CHARS:
            cores.append(core)
    return cores


@dataclass(frozen=True)
class ScanResult:
    """What the scan of the child-readable files saw.  ``found``: ``(path, secret name)`` pairs;
    ``complete``: False when a budget (files or bytes) ran out or a file could not be judged
    (``unknown`` names the first such file or budget)."""

    found: tuple[tuple[str, str], ...] = ()
    complete: bool = True
    unknown: str = ""


@dataclass(frozen=True)
class ReachVerdict:
    """``ok``: a receipt may be posted; else ``why`` says, in one sentence, what was in reach."""

    ok: bool
    why: str = ""


def reach_verdict(isolation_why: str, public_token_run: bool, scan: ScanResult) -> ReachVerdict:
    """Receipts stay on only when isolation is active (``isolation_why == ""``) or the run holds
    a composed deployment's public job token (``Deployment.public_token_run``), and the scan was
    complete and found nothing.  A finding names the file, the cause and the fix."""
    if isolation_why and not public_token_run:
        return ReachVerdict(
            False,
            f"the agent shares the action's uid ({isolation_why}), so it could write what "
            "this run reports, and a receipt from it would prove nothing",
        )
    if scan.found:
        return ReachVerdict(False, _found_text(scan.found))
    if not scan.complete:
        return ReachVerdict(
            False,
            f"the scan for the job token could not finish ({scan.unknown}), so it is "
            "not known to be out of the agent's reach",
        )
    return ReachVerdict(True)


def _found_text(found: Iterable[tuple[str, str]]) -> str:
    pairs = list(found)
    path, name = pairs[0]
    more = f" (and {len(pairs) - 1} more)" if len(pairs) > 1 else ""
    return (
        f"{path} holds the {name}{more}, readable by the agent's user; set persist-credentials: false on "
        "actions/checkout, and write cloud credentials outside the workspace, HOME and RUNNER_TEMP "
        "(or after this step)"
    )
