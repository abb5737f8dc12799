"""Receipt proofs checked by a command outside the queued run (``fullsend explain``, ``fullsend
report``), the way the queued run checks them (docs/rules.md "Receipt proof").

The same rules (``fullsend.core.receipt.proof.verify``) against the same sources: the issuer's
keys (read once, and once more for a key id they do not name), the record of the run a receipt
lists (its shim path and dispatch chain) and the refs its shim runs from — the repository's
default branch (read once) and the item's ``refs/pull/<n>/merge``; the queued run also knows its
own ``GITHUB_WORKFLOW_REF``.  What could not be read is said once, in ``notes``.
"""

from __future__ import annotations

from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.receipt.proof.issuer import keys_url
from fullsend.core.receipt.proof.rs256 import RsaPublicKey, parse_jwks
from fullsend.core.receipt.proof.verify import (
    RULE_KEYS_UNREACHABLE,
    RULE_PROOF_KEY_UNKNOWN,
    ProofVerdict,
    run_context,
    verify_proof,
)
from fullsend.core.receipt.signed import SignedReceipt
from fullsend.errors import ForgeError
from fullsend.ports import Forge


class OfflineProofs:
    """The proofs of one command's receipts in ``repository`` (``owner/repo``): ``forge`` reads,
    ``issuer`` is the configured or implied issuer; ``notes`` says what could not be read."""

    def __init__(self, forge: Forge, repository: str, issuer: str) -> None:
        self._forge, self._repository, self.issuer = forge, repository, issuer
        self._keys: dict[str, RsaPublicKey] | None = None
        self._read_again = False
        self._branch: str | None = None
        self.notes: list[str] = []

    def _read_keys(self) -> dict[str, RsaPublicKey]:
        try:
            keys = parse_jwks(self._forge.issuer_keys(keys_url(self.issuer)))
            why = "" if keys else "the answer holds no RS256 key"
        except ForgeError as exc:
            keys, why = {}, str(exc)
        if why and self._keys is None:  # the first read says it; a second one is its repeat
            self.notes.append(
                f"the OIDC issuer's keys at {keys_url(self.issuer)} could not be read ({why}): no signed "
                f"receipt counts [{RULE_KEYS_UNREACHABLE}]"
            )
        return keys

    def _refs(self, item: int) -> list[str]:
        if self._branch is None:
            try:
                self._branch = self._forge.default_branch()
            except ForgeError as exc:
                self._branch = ""
                self.notes.append(f"the repository's default branch could not be read ({exc})")
        return [f"refs/heads/{self._branch}" if self._branch else "", f"refs/pull/{item}/merge"]

    def verdict(self, receipt: SignedReceipt, comment: Comment, item: int, reader: WorkflowRun) -> ProofVerdict:
        """The verdict on ``receipt`` (``comment``'s body, on ``item``) for the queued run ``reader``."""
        if self._keys is None:
            self._keys = self._read_keys()
        if not self._keys:
            return ProofVerdict(False, RULE_KEYS_UNREACHABLE, "the issuer's keys could not be read")
        refs = self._refs(item)
        verdict = verify_proof(
            receipt, comment.created_at, run_context(self.issuer, self._repository, item, reader, refs, self._keys)
        )
        if verdict.rule_id == RULE_PROOF_KEY_UNKNOWN and verdict.kid and not self._read_again:
            self._read_again = True
            self._keys = self._read_keys() or self._keys
            ctx = run_context(self.issuer, self._repository, item, reader, refs, self._keys)
            verdict = verify_proof(receipt, comment.created_at, ctx)
        return verdict
