"""``fullsend explain <issue-or-pr-url> [--run RUN_ID] [--as-of TIME] [--json]`` (docs/architecture.md "Commands").

Read-only: why each follow-up run was or was not absorbed, and whether a queued run would skip,
rule by rule.  For the run in flight (or ``--run``) and each follow-up run it prints the verdict
of every provenance check by rule id, the binding and the amendment/context split of each
comment, which receipt lists each run (which comment, by whom, edited or not) and whether the
review-App skip would apply.  The decisions are made by the real ``fullsend.core`` functions;
the reads go through the ``Forge`` port, served by ``fullsend.adapters.github.forge.GitHubForge``
(see ``fullsend.app.commands.explain.read``).

* Token: ``GH_TOKEN``, then ``GITHUB_TOKEN``; it needs read access to the repository's issues,
  pull requests and Actions.  API base: ``GITHUB_API_URL`` (else the URL's host API);
  GraphQL: ``GITHUB_GRAPHQL_URL`` (else derived from the API base).
* Fails loudly: the first read that fails (unreachable API, 401, 403 naming the missing
  permission, 404, a cut answer) ends the command with one line on standard error naming the
  read and its cause, and no verdict is printed: a report built on a failed read would claim
  "none" where it could not see.  It never posts anything.
* Exit codes: 0 the report was printed · 1 a read failed · 2 bad arguments, no token, or an item
  GitHub answers 404 for (no such issue or pull request, or the token cannot see the repository).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.commands.explain.build import explain
from fullsend.app.commands.explain.read import ExplainReader, ReadFailed
from fullsend.app.commands.explain.render import render_json, render_text
from fullsend.app.commands.proofs import OfflineProofs
from fullsend.app.commands.steer import SteerCommandError, api_base, parse_item_url, shown_url
from fullsend.core.receipt.proof.issuer import resolve_issuer, server_for_api
from fullsend.core.scalars import parse_time
from fullsend.errors import ExitCode

TOKEN_VARS = ("GH_TOKEN", "GITHUB_TOKEN")
READ_TIMEOUT_S = 15


class ExplainArgumentError(Exception):
    """A bad argument or a missing token: exit 2 with the message on standard error."""


def explain_token(env: Mapping[str, str]) -> str:
    """``GH_TOKEN``, then ``GITHUB_TOKEN`` (trimmed).  Raises :class:`ExplainArgumentError` when neither is set."""
    for name in TOKEN_VARS:
        value = env.get(name, "").strip()
        if value:
            return value
    raise ExplainArgumentError(
        "no GitHub token: set GH_TOKEN or GITHUB_TOKEN to a token that can read the "
        "repository's issues, pull requests and Actions"
    )


def graphql_url(api_url: str, env: Mapping[str, str]) -> str:
    """``GITHUB_GRAPHQL_URL`` when set; else ``…/api/v3`` → ``…/api/graphql`` (GHES), or ``<api>/graphql``."""
    configured = env.get("GITHUB_GRAPHQL_URL", "").strip().rstrip("/")
    if configured:
        return configured
    return api_url[: -len("/v3")] + "/graphql" if api_url.endswith("/api/v3") else api_url + "/graphql"


MAX_RUN_ID = 9_223_372_036_854_775_807  # run ids are int64 in GitHub's REST API


def parse_run_id(raw: str | None) -> int | None:
    """``--run``: a decimal run id in 1..2**63-1 (GitHub's int64), or ``None`` when not given.

    Raises ``ExplainArgumentError`` quoting at most 40 characters of ``raw``; a value of more
    than 19 digits is refused before it is parsed.
    """
    if raw is None:
        return None
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or not 0 < int(text) <= MAX_RUN_ID:
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        raise ExplainArgumentError(f"--run must be a workflow run id (a number from 1 to {MAX_RUN_ID}), got {shown!r}")
    return int(text)


def item_not_found(failed: ReadFailed, number: int) -> bool:
    """True when the read that failed is the item's own record (``GET …/issues/{n}``) answered 404."""
    return failed.report.status == 404 and failed.report.call.endswith(f"/issues/{number}")


def run_explain(
    url: str,
    run: str | None,
    as_of: str | None,
    as_json: bool,
    env: Mapping[str, str],
    out: TextIO,
    err: TextIO,
    receipt_issuer: str = "",
    allow_unsigned: bool = False,
) -> int:
    """The ``fullsend explain`` command: read, judge, print; returns the exit code (0, 1 or 2).
    ``receipt_issuer`` (``""``: the one the API's server implies) and ``allow_unsigned`` say how
    receipts are checked, as the action's inputs of those names do (docs/rules.md "Receipt proof")."""
    try:
        item = parse_item_url(url)
        run_id = parse_run_id(run)
        instant = parse_time(as_of) if as_of is not None else None
        if as_of is not None and instant is None:
            raise ExplainArgumentError(f"--as-of must be an RFC 3339 time such as 2026-09-03T10:30:00Z, got {as_of!r}")
        token = explain_token(env)
        api = api_base(item, env)
    except (SteerCommandError, ExplainArgumentError) as exc:
        err.write(f"fullsend explain: {exc}\n")
        return ExitCode.BAD_INPUT
    forge = GitHubForge(item.repo, api, graphql_url(api, env), token, token, SystemClock(), READ_TIMEOUT_S)
    proofs = OfflineProofs(forge, item.repo.full_name, resolve_issuer(receipt_issuer, server_for_api(api)))
    reader = ExplainReader(item.repo, forge, proofs, allow_unsigned)
    try:
        explanation = explain(reader, item.repo, item.number, run_id, instant)
    except ReadFailed as failed:
        if item_not_found(failed, item.number):
            err.write(
                f"fullsend explain: {item.repo.full_name}#{item.number} does not exist at {api}, or the token "
                f"cannot see the repository (GitHub answered 404 for it); check the URL {shown_url(url)} "
                "and that GH_TOKEN or GITHUB_TOKEN can read the repository\n"
            )
            return ExitCode.BAD_INPUT
        err.write(
            f"fullsend explain: could not read {failed.report.call} at {api}: {failed.report.detail}; "
            "no verdict is printed, since one built without this read could be false\n"
        )
        return ExitCode.FAILED
    out.write(render_json(explanation) if as_json else render_text(explanation))
    return ExitCode.OK
