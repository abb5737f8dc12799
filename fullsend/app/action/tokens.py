"""Token capture and the role token (docs/architecture.md "Tokens").

The job token is read from ``INPUT_GITHUB_TOKEN`` before anything else and masked at once;
``GH_TOKEN``/``GITHUB_TOKEN`` in the action's own environment are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from fullsend.adapters.github.mint import mint_for_run, oidc_token_for
from fullsend.core.restricted import restricted_run
from fullsend.core.tokens.policy import counts_as_minted, mint_repos, receipt_token

if TYPE_CHECKING:  # annotations only: the fast skip takes the role token without the ports
    from fullsend.app.action.plan import RunPlan
    from fullsend.ports import Clock, Log


@dataclass(frozen=True)
class Tokens:
    """The run's credentials.  ``minted``: a swap really happened; ``expires_at`` is the
    minted token's life when the mint reported it."""

    job: str = field(repr=False)
    role: str = field(repr=False)
    minted: bool
    expires_at: datetime | None = None

    @property
    def receipt(self) -> str:
        """The receipt credential: the job token only after a real swap, else ""."""
        return receipt_token(self.job, self.role, self.minted)


def capture_job_token(environ: Mapping[str, str], mask: Callable[[str], None]) -> tuple[str, str]:
    """Read and mask ``INPUT_GITHUB_TOKEN`` and ``INPUT_ROLE_TOKEN`` first thing."""
    job = (environ.get("INPUT_GITHUB_TOKEN") or "").strip()
    role = (environ.get("INPUT_ROLE_TOKEN") or "").strip()
    mask(job)
    mask(role)
    return job, role


def acquire_role_token(
    *,
    job: str,
    role_input: str,
    mint_url: str,
    role: str,
    repository: str,
    oidc_url: str,
    oidc_bearer: str,
    clock: Clock,
    log: Log,
    mask: Callable[[str], None],
) -> Tokens:
    """Mint the role token when ``mint_url`` and ``role`` are set, else take ``role_token``.

    Raises ``MintError`` when a configured mint fails (the run fails), and ``ConfigError``
    (exit 2) before any request when ``mint_url`` is not an allowed mint URL.
    """
    if mint_url and role:
        minted = mint_for_run(
            oidc_url=oidc_url,
            oidc_bearer=oidc_bearer,
            mint_url=mint_url,
            role=role,
            repos=mint_repos(repository),
            clock=clock,
            log=log,
            mask=mask,
        )
        return Tokens(job=job, role=minted.token, minted=True, expires_at=minted.expires_at)
    if not role_input and role:
        log("warning", f"No mint URL is set, so no role token is minted for role {role}")
    return Tokens(job=job, role=role_input, minted=counts_as_minted(False, role_input, job))


def restricted_tokens(plan: RunPlan, tokens: Tokens, actor: str, log: Log) -> tuple[Tokens, bool]:
    """``(tokens, restricted)``: for a fork pull request or a Dependabot run (``actor`` is
    ``GITHUB_ACTOR``), say once that receipts and the status comment are off and why, and take the
    swap back (no receipt is read or written); otherwise ``tokens`` unchanged."""
    why = restricted_run(plan.ctx.event_name, plan.ctx.event, plan.repo.full_name, actor)
    if not why:
        return tokens, False
    log(
        "info",
        f"Receipts and the status comment are off: this is {why}, which GitHub gives a read-only "
        "job token and no secrets; the work is done all the same",
    )
    return Tokens(job=tokens.job, role=tokens.role, minted=False, expires_at=tokens.expires_at), True


def receipt_signer(oidc_url: str, oidc_bearer: str, clock: Clock) -> Callable[[str], str] | None:
    """``sign(audience)``: this job's GitHub OIDC token for ``audience``, requested by the action's
    own process (never a child's), the way the mint requests its own (``oidc_token_for``); ``None``
    when the job cannot request one (no ``id-token: write``).  ``sign`` raises ``MintError``
    (docs/architecture.md "Signed receipts")."""
    if not (oidc_url and oidc_bearer):
        return None

    def sign(audience: str) -> str:
        return oidc_token_for(oidc_url, oidc_bearer, audience, clock)

    return sign
