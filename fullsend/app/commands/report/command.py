"""``fullsend report <repository> [--since DATE] [--json] [--receipt-login LOGIN] [--receipt-issuer URL]
[--allow-unsigned-receipts]``.

The command of docs/architecture.md "Report"; ``<repository>`` is ``owner/repo`` or its URL.

Read-only: per stage, the runs that worked, the runs steered, the updates absorbed, the queued
runs that skipped, and the agent minutes and US dollars spent and saved (a skip is estimated to
save what the absorbing run spent); then the false-skip guard's counts: receipt-shaped comments
the queued run's reader would refuse, per rule id.

* Token: ``GH_TOKEN``, then ``GITHUB_TOKEN``: any token that can read the repository's issues,
  pull requests and Actions.  API base: ``GITHUB_API_URL``, else the URL's host's API
  (``https://api.github.com`` for ``owner/repo``); GraphQL: ``GITHUB_GRAPHQL_URL``, else derived.
* ``--since``: a date (``2026-11-01``) or an RFC 3339 time; default 30 days ago.
* Receipts count as the queued run counts them (docs/rules.md "Receipt proof"): a signed one by
  its proof, checked against ``--receipt-issuer`` (default: the issuer the API's server implies),
  an unsigned one only with ``--allow-unsigned-receipts``.
* Exit codes: 0 the report was printed · 1 a read failed (one line on standard error, no
  report) · 2 bad arguments, no token, or a repository GitHub answers 404 for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TextIO
from urllib.parse import urlsplit

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.commands.explain.command import graphql_url
from fullsend.app.commands.proofs import OfflineProofs
from fullsend.app.commands.report.read import read_repository
from fullsend.app.commands.report.render import render_json, render_text, report_document
from fullsend.app.commands.steer import GITHUB_COM_HOSTS, shown_url
from fullsend.context import api_url_problem
from fullsend.core.model import Repo, WorkflowRun
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.proof.issuer import resolve_issuer, server_for_api
from fullsend.core.receipt.proof.verify import RULE_UNSIGNED
from fullsend.core.receipt.signed import SignedReceipt
from fullsend.core.report.tally import ItemComment, Judge, tally
from fullsend.core.scalars import parse_time
from fullsend.errors import ExitCode, ForgeError, NotFoundError

TOKEN_VARS = ("GH_TOKEN", "GITHUB_TOKEN")
DEFAULT_WINDOW = timedelta(days=30)
EARLIEST = datetime(2008, 1, 1, tzinfo=UTC)
DEFAULT_RECEIPT_LOGIN = "github-actions[bot]"  # the job token's login on GitHub and GHES
READ_TIMEOUT_S = 15
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class ReportArgumentError(Exception):
    """A bad argument or a missing token: exit 2 with the message on standard error."""


def parse_repository(value: str, env: Mapping[str, str]) -> tuple[Repo, str]:
    """``owner/repo`` or ``http(s)://<host>/<owner>/<repo>[/…]`` → ``(repo, API base)``.

    The API base is ``GITHUB_API_URL`` when set, else ``https://api.github.com`` for github.com and
    ``owner/repo``, else ``<scheme>://<host>/api/v3`` (GHES).  Raises :class:`ReportArgumentError`."""
    text = value.strip()
    host, hostname, scheme = "github.com", "github.com", "https"
    if "://" in text:
        try:
            parts = urlsplit(text)
            hostname = (parts.hostname or "").lower()
            port = parts.port
        except ValueError:
            raise ReportArgumentError(f"{shown_url(value)} is not an http(s) URL of a repository") from None
        if parts.scheme not in ("http", "https") or not hostname:
            raise ReportArgumentError(f"{shown_url(value)} is not an http(s) URL of a repository")
        default_port = {"http": 80, "https": 443}[parts.scheme]
        scheme, host = parts.scheme, f"{hostname}:{port}" if port and port != default_port else hostname
        text = "/".join([s for s in parts.path.split("/") if s][:2])
    owner, _, name = text.removesuffix(".git").partition("/")
    if not (_NAME.fullmatch(owner) and _NAME.fullmatch(name)):
        raise ReportArgumentError(f"name a repository as owner/repo or by its URL, got {shown_url(value)!r}")
    configured = env.get("GITHUB_API_URL", "").strip()
    if configured:
        problem = api_url_problem(configured)
        if problem:
            raise ReportArgumentError(problem)
        return Repo(owner, name), configured.rstrip("/")
    api = "https://api.github.com" if hostname in GITHUB_COM_HOSTS else f"{scheme}://{host}/api/v3"
    return Repo(owner, name), api


def parse_since(value: str | None, now: datetime) -> datetime:
    """``--since``: ``YYYY-MM-DD`` (midnight UTC) or RFC 3339, not in the future; default 30 days
    before ``now``.  Raises :class:`ReportArgumentError`."""
    if value is None:
        return now - DEFAULT_WINDOW
    text = value.strip()
    instant = parse_time(text + "T00:00:00Z" if _DATE.fullmatch(text) else text)
    if instant is None:
        raise ReportArgumentError(f"--since must be a date such as 2026-11-01 or an RFC 3339 time, got {value[:40]!r}")
    if instant > now:
        raise ReportArgumentError(f"--since {value[:40]!r} is in the future")
    if instant < EARLIEST:
        raise ReportArgumentError(f"--since {value[:40]!r} is before GitHub existed; use 2008-01-01 or later")
    return instant


def report_token(env: Mapping[str, str]) -> str:
    """``GH_TOKEN``, then ``GITHUB_TOKEN``.  Raises :class:`ReportArgumentError` when neither is set."""
    for name in TOKEN_VARS:
        if env.get(name, "").strip():
            return env[name].strip()
    raise ReportArgumentError("no GitHub token: set GH_TOKEN or GITHUB_TOKEN to a token that can read the repository")


def run_report(
    repository: str,
    since: str | None,
    as_json: bool,
    receipt_login: str,
    env: Mapping[str, str],
    out: TextIO,
    err: TextIO,
    receipt_issuer: str = "",
    allow_unsigned: bool = False,
) -> int:
    """The ``fullsend report`` command: read, count, print; returns the exit code (0, 1 or 2).
    ``receipt_issuer`` (``""``: the one the API's server implies) and ``allow_unsigned`` say how
    receipts are checked, as the action's inputs of those names do."""
    now = SystemClock().now().astimezone(UTC)
    try:
        repo, api = parse_repository(repository, env)
        start = parse_since(since, now)
        token = report_token(env)
        if not receipt_login.strip():
            raise ReportArgumentError("--receipt-login must name the job token's login, e.g. github-actions[bot]")
    except ReportArgumentError as exc:
        err.write(f"fullsend report: {exc}\n")
        return ExitCode.BAD_INPUT
    forge = GitHubForge(repo, api, graphql_url(api, env), token, token, SystemClock(), READ_TIMEOUT_S)
    try:
        reads = read_repository(forge, start, receipt_login.strip())
    except NotFoundError:
        err.write(
            f"fullsend report: {repo.full_name} does not exist at {api}, or the token cannot see it "
            "(GitHub answered 404)\n"
        )
        return ExitCode.BAD_INPUT
    except ForgeError as exc:
        err.write(
            f"fullsend report: a read failed at {api}: {exc}; no report is printed, since its counts would be short\n"
        )
        return ExitCode.FAILED
    proofs = OfflineProofs(forge, repo.full_name, resolve_issuer(receipt_issuer, server_for_api(api)))
    counted = tally(
        reads.comments, reads.runs, receipt_login.strip(), receipt_judge(proofs, reads.runs, allow_unsigned)
    )
    document = report_document(repo.full_name, start, now, receipt_login.strip(), counted, reads.notes + proofs.notes)
    out.write(render_json(document) if as_json else render_text(document))
    return ExitCode.OK


def receipt_judge(proofs: OfflineProofs, runs: Mapping[int, WorkflowRun], allow_unsigned: bool) -> Judge:
    """The report's ``judge``: a signed receipt counts when its proof holds for the first run it
    lists whose record is known (none known: it counts, and its runs show as ``no-run-record``);
    an unsigned one only when ``allow_unsigned``."""

    def judge(ic: ItemComment, found: Marker | SignedReceipt) -> str | None:
        if not isinstance(found, SignedReceipt):
            return None if allow_unsigned else RULE_UNSIGNED
        reader = next((runs[i] for i in found.marker.consumed if i in runs), None)
        if reader is None:
            return None
        verdict = proofs.verdict(found, ic.comment, ic.number, reader)
        return None if verdict.ok else verdict.rule_id

    return judge
