"""What the pre-flight and the receipt know of the run besides the forge.

``PreflightFacts`` is read by the pre-flight's two checks (``fullsend.app.action.skip.preflight``) and
by both halves of the receipt (``fullsend.app.action.skip.receipt``); ``CheckFailed`` is how a check
that cannot decide says why; ``redacting`` wraps the run's log so no token is ever part of a
message.  Standard library and core only: the fast skip imports it (docs/architecture.md "Fast skip").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fullsend.core.receipt.proof.issuer import resolve_issuer
from fullsend.core.scalars import parse_run_id
from fullsend.core.tokens.policy import receipt_token

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Log

if TYPE_CHECKING:  # records only: the fast skip builds its facts without them
    from fullsend.app.action.plan import RunPlan
    from fullsend.app.action.tokens import Tokens


class CheckFailed(Exception):
    """A pre-flight check could not decide; the message names why (never a token)."""


@dataclass(frozen=True)
class PreflightFacts:
    """Everything the pre-flight and the receipt read besides the forge.

    ``run_id_raw`` / ``run_attempt`` are ``GITHUB_RUN_ID`` / ``GITHUB_RUN_ATTEMPT`` as given
    (``""`` when unset); ``repository`` is ``GITHUB_REPOSITORY`` (the work item's repo) and
    ``item_number`` the issue or PR number.  ``minted`` follows ``core.tokens.counts_as_minted``.
    ``fullsend_dir`` is the path holding ``providers/`` (``""`` = unknown); ``workspace`` is
    ``GITHUB_WORKSPACE``, the tree provider definitions must lie in (``""``: not checked).  ``event_payload``
    is the parsed ``GITHUB_EVENT_PATH`` JSON (``None`` when missing or unreadable).
    ``review_bot_logins`` is the input (empty = default); ``in_actions`` is
    ``GITHUB_ACTIONS == "true"``; ``steering_enabled`` is the effective ``steer.enabled``.
    """

    stage: str
    run_id_raw: str
    run_attempt: str
    repository: str
    item_number: int
    job_token: str = field(repr=False)
    role_token: str = field(repr=False)
    minted: bool
    fullsend_dir: str
    event_name: str = ""
    event_payload: Mapping[str, Any] | None = None
    normalized_kind: str = ""
    review_bot_logins: tuple[str, ...] = ()
    steering_enabled: bool = True
    in_actions: bool = True
    workspace: str = ""
    #: The signed receipt (docs/rules.md "Receipt proof"): the issuer (configured or implied),
    #: ``GITHUB_WORKFLOW_REF``, the default branch the event names, and whether unsigned receipts
    #: count (``allow_unsigned_receipts``).  ``proof_reads``: this reader reads the proof (the action,
    #: its fast skip included, always does; a replay of the policy without an issuer turns it off).
    receipt_issuer: str = ""
    workflow_ref: str = ""
    default_branch: str = ""
    allow_unsigned_receipts: bool = False
    proof_reads: bool = True

    @property
    def run_id(self) -> int:
        """``GITHUB_RUN_ID`` as int64; 0 when unset or malformed."""
        return parse_run_id(self.run_id_raw)

    @property
    def receipt_token(self) -> str:
        """The job token when a swap really happened, else ``""`` (docs/architecture.md "Receipt")."""
        return receipt_token(self.job_token, self.role_token, self.minted)


def redacting(log: Log, facts: PreflightFacts) -> Log:
    """``log(level, message)`` with both token values of ``facts`` blanked out as ``***`` in every
    message (defence in depth; the messages are built never to hold a token)."""
    secrets = [t for t in (facts.job_token, facts.role_token) if t]

    def redacted(level: str, message: str) -> None:
        for secret in secrets:
            message = message.replace(secret, "***")
        log(level, message)

    return redacted


def preflight_facts(plan: RunPlan, tokens: Tokens) -> PreflightFacts:
    """The facts of ``plan`` under ``tokens`` (the fast skip builds the same from plain inputs)."""
    return PreflightFacts(
        stage=plan.inputs.stage,
        run_id_raw=plan.ctx.run_id_raw,
        run_attempt=plan.ctx.run_attempt_raw,
        repository=plan.repo.full_name,
        item_number=plan.item,
        job_token=tokens.job,
        role_token=tokens.role,
        minted=tokens.minted,
        fullsend_dir=str(plan.ctx.workspace / plan.inputs.fullsend_dir),
        event_name=plan.ctx.event_name,
        event_payload=plan.ctx.event if plan.ctx.event_readable else None,
        review_bot_logins=plan.inputs.review_bot_logins,
        steering_enabled=plan.steer.steer_enabled,
        in_actions=plan.ctx.actions,
        workspace=str(plan.ctx.workspace),
        receipt_issuer=resolve_issuer(plan.inputs.receipt_issuer, plan.ctx.server_url),
        workflow_ref=plan.ctx.workflow_ref,
        default_branch=plan.ctx.default_branch,
        allow_unsigned_receipts=plan.inputs.allow_unsigned_receipts,
    )
