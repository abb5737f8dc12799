"""The queued run's pre-flight skips before the application is loaded (docs/architecture.md "Fast skip").

``fullsend run`` asks :func:`fast_skip` first, right after the re-execution.  It reads the few
inputs the checks need with the standard library and runs the pre-flight's two checks itself,
in the pre-flight's order: ``check_receipt`` of ``fullsend.app.action.receipt`` over the receipt
view and the role token's ``viewer`` (GraphQL), then ``check_head_reviewed`` of
``fullsend.app.action.preflight`` over this run, the pull request and its reviews (REST,
``fullsend.app.action.fastreview``).  Every request of both is sent at once when both may apply
(``fullsend.adapters.github.lite``): one round trip decides.  Only a skip is decided here: its
log lines, outputs and step summary are the ones the full lifecycle writes.  Everything else —
no skip, an input it does not read plainly, a mint, a token that is not an installation token, a
restricted run, any error, rate limit or unknown shape, a cancellation — is "undecided", says
nothing, and the full lifecycle runs from the start, validating every input before any work; the
answers already read are handed to it (:attr:`FastResult.prefetched`), so it sends them again
only when they were not clean.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from fullsend import __version__
from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console
from fullsend.adapters.github import lite, lite_answers
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.facts import PreflightFacts, redacting
from fullsend.app.action.plaininputs import BOOLS, plain_inputs
from fullsend.app.action.preflight import check_head_reviewed, head_review_base
from fullsend.app.action.receipt import check_receipt
from fullsend.app.action.skipend import publish_skip
from fullsend.context import GitHubContext, api_url_problem, item_from_event, load_context
from fullsend.core.model import Comment, PullRequest, Repo, Review, WorkflowRun
from fullsend.core.receipt.proof.issuer import resolve_issuer
from fullsend.core.receipt.skips import head_review_precheck
from fullsend.core.restricted import restricted_run
from fullsend.core.tokens.policy import counts_as_minted

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.app.action.fastreview import HeadReads
    from fullsend.ports import Forge

INSTALLATION_PREFIX = "ghs_"  # as fullsend.adapters.github.logins: the kind GraphQL's viewer answers for
LIST_PAGES_MAX = 100  # as fullsend.adapters.github.forge
TIMEOUT_S = 15.0  # per request, as the forge's


@dataclass
class FastResult:
    """``exit_code`` is set when the run skipped (outputs and summary written); else the full
    lifecycle runs.  ``prefetched`` maps ``"job"``/``"role"`` to the clean answers read, keyed
    by :func:`fullsend.adapters.github.lite.prefetch_key`."""

    exit_code: int | None = None
    prefetched: dict[str, dict[str, lite.LiteAnswer]] = field(default_factory=dict)


class _Undecided(Exception):
    """Leave the decision to the full lifecycle."""


def fast_skip(console: Console, environ: Mapping[str, str], cancellation: Cancellation) -> FastResult:
    """Decide a pre-flight skip on the standard library, or leave it (see the module).  Never
    raises: any doubt does the work (docs/architecture.md "Pre-flight skips")."""
    result = FastResult()
    started_at = SystemClock().now()
    try:
        facts, ctx, lines = _facts(environ)
        console.mask(facts.job_token)  # first, as lifecycle does (the full path's masks are no-ops then)
        console.mask(facts.role_token)
        forge = cast(
            "Forge", _LiteForge(facts, (ctx.graphql_url, ctx.api_url), environ, cancellation, result.prefetched)
        )
        log = redacting(lambda lvl, text: lines.append((lvl, text)), facts)
        skip = check_receipt(forge, facts, log) or check_head_reviewed(forge, facts, log)
    except Exception:  # _Undecided, lite.Undecided, or anything unforeseen: the full path decides
        return result
    if skip is None or cancellation.requested.is_set():
        return result
    result.exit_code = publish_skip(console, facts, ctx, skip, lines, started_at)
    return result


# ---- what the check needs, read plainly ----------------------------------------------------------
def _facts(environ: Mapping[str, str]) -> tuple[PreflightFacts, GitHubContext, list[tuple[str, str]]]:
    """The receipt check's facts, as ``lifecycle`` builds them, and the harness warnings it logs
    first; ``_Undecided`` when any input it reads is not plainly valid, a mint is configured, or
    the run is restricted."""
    ctx = load_context(environ)
    inputs = plain_inputs(environ, ctx.workspace)  # every input, so bad input still makes no API call
    repo = Repo.parse(ctx.repository)
    if not ctx.actions or repo is None or any(api_url_problem(url) for url in (ctx.api_url, ctx.graphql_url)):
        raise _Undecided
    stage = inputs["stage"]
    item = _item(inputs.get("item"), ctx.event)
    job = (environ.get("INPUT_GITHUB_TOKEN") or "").strip()  # as tokens.capture_job_token
    role = (environ.get("INPUT_ROLE_TOKEN") or "").strip()
    if not (job.startswith(INSTALLATION_PREFIX) and role.startswith(INSTALLATION_PREFIX)):
        raise _Undecided  # another kind resolves its login over REST first: the full path's
    if restricted_run(ctx.event_name, ctx.event, repo.full_name, environ.get("GITHUB_ACTOR", "")):
        raise _Undecided
    enabled, warnings = _steering(inputs, ctx.workspace)
    facts = PreflightFacts(
        stage=stage,
        run_id_raw=ctx.run_id_raw,
        run_attempt=ctx.run_attempt_raw,
        repository=repo.full_name,
        item_number=item,
        job_token=job,
        role_token=role,
        minted=counts_as_minted(False, role, job),
        fullsend_dir=str(ctx.workspace / inputs.get("fullsend_dir", ".fullsend")),
        event_name=ctx.event_name,
        event_payload=ctx.event if ctx.event_readable else None,
        review_bot_logins=tuple(p.strip() for p in inputs.get("review_bot_logins", "").split(",") if p.strip()),
        steering_enabled=enabled,
        in_actions=ctx.actions,
        workspace=str(ctx.workspace),
        receipt_issuer=resolve_issuer(inputs.get("receipt_issuer", ""), ctx.server_url),
        workflow_ref=ctx.workflow_ref,
        default_branch=ctx.default_branch,
        allow_unsigned_receipts=BOOLS[inputs.get("allow_unsigned_receipts", "false")],
        proof_reads=False,  # a signed receipt listing this run: the full path verifies it
    )
    return facts, ctx, warnings


def _item(raw: str | None, event: Mapping[str, Any]) -> int:
    item = int(raw) if raw is not None else item_from_event(event)  # plain_inputs checked the digits
    if item <= 0:
        raise _Undecided
    return item


def _steering(inputs: Mapping[str, str], workspace: Path) -> tuple[bool, list[tuple[str, str]]]:
    """The effective ``steer.enabled`` (the input, else the harness's, else on:
    docs/architecture.md "Harness") and the harness's warning lines; ``_Undecided`` for a value
    or a harness in doubt."""
    raw = inputs.get("steer_enabled")
    enabled = BOOLS[raw] if raw is not None else None  # plain_inputs checked the spelling
    numbers = [int(inputs[n]) if n in inputs else None for n in ("max_steers", "poll_interval_seconds")]
    from fullsend.errors import ConfigError
    from fullsend.harness import Harness, harness_diagnostics, load_harness, with_overrides

    harness = Harness()
    if inputs.get("harness"):
        path = (workspace / inputs["harness"]).resolve()
        if not path.is_relative_to(workspace.resolve()):
            raise _Undecided
        try:
            harness = load_harness(path)
        except ConfigError:
            raise _Undecided from None
    if not (inputs.get("prompt") or inputs.get("prompt_file") or harness.prompt):
        raise _Undecided  # no prompt: the full path's exit 2
    try:
        steer = with_overrides(harness.steer, enabled, *numbers)
    except ConfigError:
        raise _Undecided from None
    warnings = [("warning", f"{d.field}: {d.message} [{d.rule}]") for d in harness_diagnostics(harness)]
    return steer.steer_enabled, warnings


# ---- the reads, sent at once ---------------------------------------------------------------------
class _LiteForge:
    """The two reads ``check_receipt`` makes over GraphQL (``receipt_view``, ``viewer_login``) and
    the three of ``check_head_reviewed`` (:class:`HeadReads`), answered by the lite client; every
    other read, and any answer in doubt, is ``_Undecided``.  Clean answers are recorded in
    ``prefetched`` for the full lifecycle."""

    def __init__(
        self,
        facts: PreflightFacts,
        urls: tuple[str, str],
        environ: Mapping[str, str],
        cancel: Cancellation,
        prefetched: dict[str, dict[str, lite.LiteAnswer]],
    ) -> None:
        self._facts, self._prefetched, self._cancel = facts, prefetched, cancel
        agent = f"fullsend-steer-action/{__version__}"
        self._client = lite.LiteClient(urls[0], environ, TIMEOUT_S, agent)
        base = head_review_base(facts)
        self._head_wanted = base is not None and head_review_precheck(base) is None
        self._rest_url = urls[1]
        self._head: HeadReads | None = None
        self._role_login = ""

    @property
    def head(self) -> HeadReads:
        """The head-reviewed reads, loaded when first needed (a receipt skip never needs them)."""
        if self._head is None:
            from fullsend.app.action.fastreview import HeadReads

            rest = self._client.sibling(self._rest_url)
            self._head = HeadReads(self._facts, rest, self._at_once, self._head_wanted, self._prefetched)
        return self._head

    def get_run(self, run_id: int) -> WorkflowRun:
        return self.head.get_run(run_id)

    def get_pull_request(self, number: int) -> PullRequest:
        return self.head.get_pull_request(number)

    def list_reviews(self, number: int) -> list[Review]:
        return self.head.list_reviews(number)

    def _at_once(self, *calls: Callable[[], lite.LiteAnswer]) -> list[lite.LiteAnswer]:
        """``calls`` on threads at once; a signal ends the wait (the full path then cancels)."""
        wake = threading.Event()
        self._cancel.on_cancel(wake.set)
        return lite.concurrently(*calls, wake=wake)

    def _ask(self, credential: str, query: str, variables: Mapping[str, Any] | None) -> lite.LiteAnswer:
        token = self._facts.job_token if credential == "job" else self._facts.role_token
        return self._client.post(token, lite.request_body(query, variables))

    def _keep(
        self, credential: str, query: str, variables: Mapping[str, Any] | None, answer: lite.LiteAnswer, label: str
    ) -> dict[str, Any]:
        data = lite_answers.envelope_data(answer, label)
        self._prefetched.setdefault(credential, {})[lite.prefetch_key(query, variables)] = answer
        return data

    def receipt_view(self, number: int) -> tuple[str, list[Comment]]:
        """As ``GitHubForge.receipt_view`` for an installation token, with the role token's
        ``viewer`` sent alongside the first page."""
        owner, name = self._facts.repository.split("/", 1)
        comments: list[Comment] = []
        cursor, login = "", ""
        for page in range(LIST_PAGES_MAX):
            variables = {"owner": owner, "name": name, "number": number, "after": cursor or None}
            if page == 0:  # with the head-reviewed reads when that check may apply: one round trip
                answer, role_answer, *head = self._at_once(
                    partial(self._ask, "job", lite.RECEIPT_VIEW_QUERY, variables),
                    partial(self._ask, "role", lite.VIEWER_QUERY, None),
                    *(self.head.calls() if self._head_wanted else []),
                )
                if head:
                    self.head.keep(head)
                data = self._keep("role", lite.VIEWER_QUERY, None, role_answer, "GraphQL viewer")
                self._role_login = lite_answers.viewer_login(data, "GraphQL viewer")
            else:
                answer = self._ask("job", lite.RECEIPT_VIEW_QUERY, variables)
            data = self._keep("job", lite.RECEIPT_VIEW_QUERY, variables, answer, "GraphQL receipt view")
            login, found, cursor = lite_answers.receipt_page(data, "GraphQL receipt view")
            comments.extend(found)
            if not cursor:
                break
        return _app_spelling(login), comments

    def viewer_login(self, credential: str) -> str:
        """The role token's login read alongside the receipt view (``name[bot]``, as
        ``LoginResolution.app_spelling`` spells an installation token's)."""
        if credential != "role" or not self._role_login:
            raise _Undecided
        return _app_spelling(self._role_login)

    def list_issue_comments(self, number: int, credential: str = "role") -> list[Comment]:
        raise _Undecided  # the REST fallback is the full path's


def _app_spelling(login: str) -> str:
    return login if login.lower().endswith("[bot]") else login + "[bot]"
