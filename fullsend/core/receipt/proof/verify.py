"""Whether a signed receipt's proof holds: the reader's decision as data, one rule id per failure.

Implements docs/rules.md "Receipt proof" (docs/architecture.md "Signed receipts").  The proof is
GitHub's OIDC token of the run that wrote the receipt.  In order, the first failure decides:

1. ``receipt-proof-malformed`` — not a compact JWS with JSON header and claims of the documented types;
2. ``receipt-proof-algorithm`` — its ``alg`` is not ``RS256``;
3. ``receipt-proof-issuer`` — its ``iss`` is not the configured issuer (the issuer, and the URL its
   keys are fetched from, come from configuration, never from the token);
4. ``receipt-proof-key-unknown`` — its ``kid`` is not among the issuer's published keys (the
   reader fetches them again at most once per run, then the key has rotated away or never was);
5. ``receipt-proof-signature`` — the signature does not verify with that key;
6. ``receipt-proof-audience`` — its ``aud`` is not this comment's content's audience
   (``fullsend.core.receipt.signed.receipt_audience``: other runs, another item, another head);
7. ``receipt-proof-run`` — its ``repository`` and ``run_id`` are not the reader's repository and
   the writer run the receipt names (or the writer is the reader's own run);
8. ``receipt-proof-workflow`` — its ``workflow_ref`` is not the reader's shim at a ref the shim
   runs from for this item (another workflow, a branch run);
9. ``receipt-proof-dispatch`` — its ``job_workflow_ref`` is not in the reader's dispatch chain,
   compared as the provenance chain compares (path and ref);
10. ``receipt-proof-issued-late`` — issued (``iat``) after the comment was created, beyond
    :data:`ISSUED_LEEWAY_S`.

An expired token is still evidence: ``exp`` and ``nbf`` are not read.  A receipt whose proof fails
is not a receipt: the queued run works (the skip fails open).  Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from fullsend.core.model import ReferencedWorkflow, WorkflowRun
from fullsend.core.receipt.proof.jwt import Jwt, decode_jwt
from fullsend.core.receipt.proof.rs256 import RsaPublicKey, verify_rs256
from fullsend.core.receipt.signed import SignedReceipt, receipt_audience
from fullsend.core.scalars import decimal_id

RULE_UNSIGNED = "receipt-unsigned"
RULE_PROOF_MALFORMED = "receipt-proof-malformed"
RULE_PROOF_ALGORITHM = "receipt-proof-algorithm"
RULE_PROOF_ISSUER = "receipt-proof-issuer"
RULE_PROOF_KEY_UNKNOWN = "receipt-proof-key-unknown"
RULE_PROOF_SIGNATURE = "receipt-proof-signature"
RULE_PROOF_AUDIENCE = "receipt-proof-audience"
RULE_PROOF_RUN = "receipt-proof-run"
RULE_PROOF_WORKFLOW = "receipt-proof-workflow"
RULE_PROOF_DISPATCH = "receipt-proof-dispatch"
RULE_PROOF_ISSUED_LATE = "receipt-proof-issued-late"
RULE_KEYS_UNREACHABLE = "receipt-keys-unreachable"
#: Every rule id of the receipt's proof (docs/rules.md "Receipt proof").
PROOF_RULE_IDS: tuple[str, ...] = (
    RULE_UNSIGNED,
    RULE_PROOF_MALFORMED,
    RULE_PROOF_ALGORITHM,
    RULE_PROOF_ISSUER,
    RULE_PROOF_KEY_UNKNOWN,
    RULE_PROOF_SIGNATURE,
    RULE_PROOF_AUDIENCE,
    RULE_PROOF_RUN,
    RULE_PROOF_WORKFLOW,
    RULE_PROOF_DISPATCH,
    RULE_PROOF_ISSUED_LATE,
    RULE_KEYS_UNREACHABLE,
)

#: How far the token's ``iat`` may lie after the comment's ``created_at`` (two clocks of GitHub's).
ISSUED_LEEWAY_S = 120
#: The only algorithm a receipt's proof may use.
ALGORITHM = "RS256"
_STRING_CLAIMS = ("iss", "repository", "run_id", "workflow_ref", "job_workflow_ref")


@dataclass(frozen=True)
class ProofContext:
    """What the reader knows and the proof must match.

    ``issuer``: the configured issuer (``iss``).  ``repository``: the reader's ``owner/repo``;
    ``item``: the item the comment is on; ``reader_run_id``: the reader's own run.
    ``workflow_refs``: every ``owner/repo/path@ref`` the reader's shim runs as for this item
    (``shim_workflow_refs``).  ``chain``: the reader's own run's ``referenced_workflows``.
    ``keys``: the issuer's published keys by key id.
    """

    issuer: str
    repository: str
    item: int
    reader_run_id: int
    workflow_refs: frozenset[str]
    chain: tuple[ReferencedWorkflow, ...]
    keys: Mapping[str, RsaPublicKey]


@dataclass(frozen=True)
class ProofVerdict:
    """``ok`` and, when not, the ``rule_id`` and ``why`` (a clause for a log or ``explain`` line;
    never the token).  ``kid`` is the key id the token names (for a fetch again of the keys)."""

    ok: bool
    rule_id: str = ""
    why: str = ""
    kid: str = ""


def _fail(rule_id: str, why: str, kid: str = "") -> ProofVerdict:
    return ProofVerdict(False, rule_id, why, kid)


def ref_key(workflow_ref: str) -> str:
    """A workflow ref (``owner/repo/path@ref``) as compared: the ``owner/repo/`` part lower-case
    (GitHub's logins and repository names are case-insensitive), the path and ref as written."""
    owner, _, rest = workflow_ref.partition("/")
    repo, _, path = rest.partition("/")
    return f"{owner.lower()}/{repo.lower()}/{path}"


def shim_workflow_refs(repository: str, shim_path: str, refs: Iterable[str]) -> frozenset[str]:
    """``owner/repo/<shim_path>@<ref>`` for each non-empty ref, as :func:`ref_key` compares them.

    A run record's ``path`` may carry a ref (GitHub's documented example reads
    ``.github/workflows/build.yml@main``): only the part before ``@`` is the path."""
    path = shim_path.partition("@")[0]
    return frozenset(ref_key(f"{repository}/{path}@{ref}") for ref in refs if ref)


def run_context(
    issuer: str, repository: str, item: int, reader: WorkflowRun, refs: Iterable[str], keys: Mapping[str, RsaPublicKey]
) -> ProofContext:
    """The context of a reader that is the run ``reader`` (its record gives the shim path and the
    dispatch chain), its shim running from ``refs`` (``refs/heads/<default branch>``,
    ``refs/pull/<n>/merge``, its own ref when known): what ``fullsend explain`` and ``fullsend
    report`` check a receipt against, as the queued run itself does."""
    return ProofContext(
        issuer=issuer,
        repository=repository,
        item=item,
        reader_run_id=reader.id,
        workflow_refs=shim_workflow_refs(repository, reader.path, refs),
        chain=reader.referenced_workflows,
        keys=keys,
    )


def chain_matches(job_workflow_ref: str, chain: Sequence[ReferencedWorkflow]) -> bool:
    """Whether ``job_workflow_ref`` names an entry of ``chain``: the entry's ``path`` (GitHub writes
    ``owner/repo/path@<ref as written in uses:>``), or its path's file with the entry's ``ref``
    (``@main`` is ``@refs/heads/main`` in the token).  ``sha`` is not compared, as in the chain
    check of provenance."""
    wanted = ref_key(job_workflow_ref)
    for entry in chain:
        file, at, _ = entry.path.rpartition("@")
        if wanted == ref_key(entry.path) or (at and entry.ref and wanted == ref_key(f"{file}@{entry.ref}")):
            return True
    return False


def local_dispatch_matches(job_workflow_ref: str, workflow_ref: str, ctx: ProofContext) -> bool:
    """Whether a dispatch in the reader's own repository (``uses: ./…``) signed: a local reusable
    workflow runs at its caller's ref, which follows the event (``refs/pull/<n>/merge`` for a review,
    the default branch for a comment), so the writer's and the reader's refs may differ.  Holds when
    ``job_workflow_ref`` is in ``ctx.repository``, at the same ref as the writer's shim
    (``workflow_ref``, already one the reader's shim runs from), and names the file of an entry of
    the reader's chain in its own repository."""
    file, _, ref = job_workflow_ref.rpartition("@")
    if not file or ref != workflow_ref.rpartition("@")[2]:
        return False
    own = f"{ctx.repository.lower()}/"
    if not ref_key(file).startswith(own):
        return False
    return any(ref_key(entry.path.rpartition("@")[0] or entry.path) == ref_key(file) for entry in ctx.chain)


def _shape(token: str) -> Jwt | str:
    """The decoded token, or why it is malformed."""
    jwt = decode_jwt(token)
    if jwt is None:
        return "it is not a JSON Web Token"
    for claim in _STRING_CLAIMS:
        if not isinstance(jwt.claims.get(claim), str):
            return f'its claim "{claim}" is missing or not a string'
    iat = jwt.claims.get("iat")
    if not isinstance(iat, int) or isinstance(iat, bool) or iat <= 0:
        return 'its claim "iat" is missing or not a positive whole number'
    return jwt


def _signature(jwt: Jwt, ctx: ProofContext) -> ProofVerdict | None:
    """Rules 2-5: algorithm, issuer, key, signature; ``None`` when they hold."""
    alg, kid = jwt.header.get("alg"), jwt.header.get("kid")
    if alg != ALGORITHM:
        return _fail(RULE_PROOF_ALGORITHM, f"its algorithm {str(alg)[:20]!r} is not {ALGORITHM}")
    if jwt.claims["iss"] != ctx.issuer:
        return _fail(RULE_PROOF_ISSUER, f"its issuer {jwt.claims['iss'][:100]!r} is not the configured {ctx.issuer!r}")
    if not isinstance(kid, str) or not kid:
        return _fail(RULE_PROOF_KEY_UNKNOWN, "it names no key id")
    key = ctx.keys.get(kid)
    if key is None:
        return _fail(
            RULE_PROOF_KEY_UNKNOWN,
            f"its key {kid[:80]!r} is not among the keys the issuer publishes (rotated away since, or never the "
            "issuer's)",
            kid,
        )
    if not verify_rs256(key, jwt.signing_input, jwt.signature):
        return _fail(RULE_PROOF_SIGNATURE, f"its signature does not verify with the issuer's key {kid[:80]!r}", kid)
    return None


def _claims(receipt: SignedReceipt, jwt: Jwt, ctx: ProofContext) -> ProofVerdict | None:
    """Rules 6-9: audience, run, workflow, dispatch; ``None`` when they hold."""
    claims = jwt.claims
    marker = receipt.marker
    audience = receipt_audience(ctx.repository, ctx.item, receipt.writer_run_id, marker.consumed, marker.head)
    if claims.get("aud") not in (audience, [audience]):
        return _fail(RULE_PROOF_AUDIENCE, "its audience is not this comment's content (other runs, item or head)")
    if claims["repository"].lower() != ctx.repository.lower():
        return _fail(RULE_PROOF_RUN, f"it was issued to {claims['repository'][:100]!r}, not {ctx.repository!r}")
    if decimal_id(claims["run_id"]) != receipt.writer_run_id:
        return _fail(RULE_PROOF_RUN, f"it was issued to run {claims['run_id'][:30]!r}, not {receipt.writer_run_id}")
    if receipt.writer_run_id == ctx.reader_run_id:
        return _fail(RULE_PROOF_RUN, "it names this run itself as the writer")
    if ref_key(claims["workflow_ref"]) not in ctx.workflow_refs:
        return _fail(
            RULE_PROOF_WORKFLOW,
            f"it was issued to workflow {claims['workflow_ref'][:200]!r}, not this shim at a ref it runs from",
        )
    dispatch = claims["job_workflow_ref"]
    if not (chain_matches(dispatch, ctx.chain) or local_dispatch_matches(dispatch, claims["workflow_ref"], ctx)):
        return _fail(
            RULE_PROOF_DISPATCH,
            f"it was issued to a job of {claims['job_workflow_ref'][:200]!r}, not of this run's dispatch workflow",
        )
    return None


def verify_proof(receipt: SignedReceipt, created_at: datetime | None, ctx: ProofContext) -> ProofVerdict:
    """The verdict on ``receipt``'s proof, for a comment created at ``created_at`` (``None``:
    unknown, which fails ``receipt-proof-issued-late``).  The first failing rule of the module's
    list decides; ``ProofVerdict(True)`` when all hold.  Never raises."""
    jwt = _shape(receipt.proof)
    if isinstance(jwt, str):
        return _fail(RULE_PROOF_MALFORMED, jwt)
    failed = _signature(jwt, ctx) or _claims(receipt, jwt, ctx)
    if failed is not None:
        return failed
    iat = jwt.claims["iat"]
    if created_at is None or iat > created_at.timestamp() + ISSUED_LEEWAY_S:
        return _fail(RULE_PROOF_ISSUED_LATE, "it was issued after the comment was created")
    return ProofVerdict(True, kid=str(jwt.header.get("kid", "")))
