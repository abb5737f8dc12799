"""The receipt writer's proof: the body it posts, signed with this job's OIDC token
(docs/architecture.md "Signed receipts", docs/rules.md#receipt-lists-my-run "Signed form").

The action's own process asks GitHub's token service for a token whose audience binds the
receipt's content (``fullsend.core.receipt.signed.receipt_audience``), after the agent and every
child ended, and puts it in the receipt's marker; it is sent nowhere else and never logged.  A job
that cannot sign (no ``id-token: write``, a refused request) posts no receipt, unless
``allow_unsigned_receipts`` asks for the unsigned one (docs/rules.md#receipt-unsigned).
Standard library, core and the ports only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.core.receipt.marker import receipt_body
from fullsend.core.receipt.proof.verify import RULE_UNSIGNED
from fullsend.core.receipt.signed import receipt_audience, signed_receipt_body
from fullsend.errors import FullsendError

if TYPE_CHECKING:  # annotations only
    from fullsend.ports import Log

#: ``sign(audience)``: this job's OIDC token for ``audience``; raises a ``FullsendError``
#: (``MintError``) when GitHub refuses or does not answer (``fullsend.app.action.tokens.receipt_signer``).
Signer = Callable[[str], str]


def body_to_post(facts: PreflightFacts, ids: Sequence[int], head: str, sign: Signer | None, log: Log) -> str | None:
    """The receipt body this run posts for normalised ``ids`` and ``head``: the signed form when
    ``sign`` gives a token of the compact form, else the unsigned form where
    ``allow_unsigned_receipts`` allows it (one line saying so), else ``None`` (one warning saying
    why no receipt is posted)."""
    if sign is None:
        why = "this job cannot request an OIDC token (the stage job needs id-token: write)"
    else:
        audience = receipt_audience(facts.repository, facts.item_number, facts.run_id, ids, head)
        try:
            body = signed_receipt_body(ids, head, facts.run_id, sign(audience))
        except FullsendError as exc:
            why = f"GitHub's OIDC token could not be had ({exc})"
        else:
            if body:
                return body
            why = "GitHub's OIDC token is not a compact JSON Web Token, or this run has no run id"
    if facts.allow_unsigned_receipts:
        log("info", f"Posting an unsigned steer receipt, as allow_unsigned_receipts allows: {why} [{RULE_UNSIGNED}]")
        return receipt_body(ids, head)
    log(
        "warning",
        f"Not posting the steer receipt: it could not be signed: {why}. The queued run will redo this "
        f"work; give the stage job id-token: write, or set allow_unsigned_receipts [{RULE_UNSIGNED}]",
    )
    return None
