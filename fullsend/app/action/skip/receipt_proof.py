"""The receipt reader's proof: what it reads beside the receipt query, and its verdict on each
signed receipt (docs/rules.md "Receipt proof", docs/architecture.md "Signed receipts").

:class:`ProofReads` starts two reads the moment the reader starts, each on a thread of its own,
beside the receipt query: the issuer's keys (``<issuer>/.well-known/jwks``, no credential) and
this run's record (its shim path and dispatch chain, job token).  The reader waits for them only
when a signed receipt lists this run, so a run without one never waits on the key host.  A key id
the keys do not name makes it read them once more, at most once per run; keys it cannot read are
warned about once per run and honour no signed receipt.  The token in a receipt is checked here
and sent nowhere.  Standard library, core and the ports only (the fast skip loads the receipt
reader and starts these reads as the full path does; only a replay of the policy without an
issuer turns them off, ``PreflightFacts.proof_reads``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Generic, TypeVar

from fullsend.app.action.skip.facts import CheckFailed, PreflightFacts
from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.receipt.proof.issuer import keys_url
from fullsend.core.receipt.proof.rs256 import RsaPublicKey, parse_jwks
from fullsend.core.receipt.proof.verify import (
    RULE_KEYS_UNREACHABLE,
    RULE_PROOF_KEY_UNKNOWN,
    ProofContext,
    ProofVerdict,
    run_context,
    verify_proof,
)
from fullsend.core.receipt.signed import SignedReceipt
from fullsend.errors import ForgeError

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Forge, Log

T = TypeVar("T")


class ProofNotHere(Exception):
    """A signed receipt lists this run and this reader may not read its proof (the fast skip):
    the full lifecycle decides."""


class Background(Generic[T]):
    """``read()`` on a daemon thread, started at once; :meth:`result` waits for it and returns
    its value or raises what it raised.  The wait is bounded by the read's own timeouts."""

    def __init__(self, read: Callable[[], T], name: str) -> None:
        self._read = read
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._read()
        except BaseException as exc:  # handed to the waiting reader, which decides
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set when no error was raised


def shim_refs(own_workflow_ref: str, default_branch: str, item: int) -> list[str]:
    """The refs a shim runs from for ``item``: its own run's (the ref of ``own_workflow_ref``,
    ``GITHUB_WORKFLOW_REF``, when known), the default branch, and the item's
    ``refs/pull/<n>/merge`` (docs/rules.md#receipt-proof-workflow)."""
    own = own_workflow_ref.rpartition("@")[2] if "@" in own_workflow_ref else ""
    return [own, f"refs/heads/{default_branch}" if default_branch else "", f"refs/pull/{item}/merge"]


class ProofReads:
    """The proof reads of one run's reader (see the module).  ``verdict`` raises ``CheckFailed``
    when this run's record cannot be read."""

    def __init__(self, forge: Forge, facts: PreflightFacts, log: Log) -> None:
        self._forge, self._facts, self._log = forge, facts, log
        self._url = keys_url(facts.receipt_issuer)
        self._keys_read: Background[Mapping[str, object]] = Background(
            lambda: forge.issuer_keys(self._url), "receipt-keys"
        )
        self._run_read: Background[WorkflowRun] = Background(lambda: forge.get_run(facts.run_id), "receipt-own-run")
        self._keys: dict[str, RsaPublicKey] | None = None
        self._read_again = False
        self._warned = False

    def _read_keys(self, read: Callable[[], Mapping[str, object]]) -> dict[str, RsaPublicKey]:
        """The issuer's RS256 keys by id; ``{}`` (warned once per run) when they cannot be read."""
        try:
            keys = parse_jwks(read())
            why = "" if keys else "the answer holds no RS256 key"
        except ForgeError as exc:
            keys, why = {}, str(exc)
        if why and not self._warned:
            self._warned = True
            self._log(
                "warning",
                f"Could not read the OIDC issuer's keys at {self._url}: {why}; no signed receipt is honoured in "
                f"this run [{RULE_KEYS_UNREACHABLE}]",
            )
        return keys

    def _context(self) -> ProofContext:
        if self._keys is None:
            self._keys = self._read_keys(self._keys_read.result)
        try:
            me = self._run_read.result()
        except ForgeError as exc:
            raise CheckFailed(f"reading this run, whose shim and dispatch a receipt's proof must name: {exc}") from None
        facts = self._facts
        refs = shim_refs(facts.workflow_ref, facts.default_branch, facts.item_number)
        return run_context(facts.receipt_issuer, facts.repository, facts.item_number, me, refs, self._keys)

    def verdict(self, receipt: SignedReceipt, comment: Comment) -> ProofVerdict:
        """The verdict on ``receipt`` (the comment ``comment``'s body): core's, after one more
        read of the keys when they do not name the token's key (once per run)."""
        ctx = self._context()
        if not ctx.keys:
            return ProofVerdict(False, RULE_KEYS_UNREACHABLE, "the issuer's keys could not be read")
        verdict = verify_proof(receipt, comment.created_at, ctx)
        if verdict.rule_id == RULE_PROOF_KEY_UNKNOWN and verdict.kid and not self._read_again:
            self._read_again = True
            self._keys = self._read_keys(lambda: self._forge.issuer_keys(self._url)) or dict(ctx.keys)
            verdict = verify_proof(receipt, comment.created_at, replace(ctx, keys=self._keys))
        return verdict
