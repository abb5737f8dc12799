"""``fullsend steer <issue-or-pr-url> "<text>" [--stage S]`` (docs/architecture.md "Commands").

Posts one comment ``<command> <text>`` on the work item, as the user, where the command is
``/fs-review`` (a pull request's default), ``/fs-triage`` (an issue's default) or the ``--stage``
given (``review``, ``fix``, ``triage``).  There is no steer-specific command: the comment fires
the shim, the Route job authorizes it with its normal permission floors, and the run in
flight absorbs the follow-up run on provenance.

* The URL decides pull request (``/pull/N``) or issue (``/issues/N``).  ``/issues/N`` is
  ambiguous (GitHub serves a pull request there too); when the answer matters (no ``--stage``,
  or a pull-request stage) the issue record says which it is.
* Token: ``GH_TOKEN``, then ``GITHUB_TOKEN``, then ``gh auth token``.  API base:
  ``GITHUB_API_URL``, else ``https://api.github.com`` for github.com, else ``<scheme>://<host>/api/v3``.
* Exit codes: 0 posted · 1 the API call failed · 2 a bad URL, text or stage, or no token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import urlsplit

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.confinement.proc import ExecResult, run_command
from fullsend.adapters.github.forge import GitHubForge
from fullsend.adapters.github.transport import NOTHING_SENT
from fullsend.context import api_url_problem
from fullsend.core.model import Repo
from fullsend.errors import ExitCode, ForgeError, FullsendError, MalformedResponse, NotFoundError, SandboxError

#: ``--stage`` → the slash command the dispatch workflow routes (WIRE).
STAGE_COMMANDS = {"review": "/fs-review", "fix": "/fs-fix", "triage": "/fs-triage"}
PULL_REQUEST_STAGES = frozenset({"review", "fix"})
GITHUB_COM_HOSTS = frozenset({"github.com", "www.github.com"})
GH_AUTH_TIMEOUT_S = 10.0
POST_TIMEOUT_S = 15

NOT_HTTP = "the URL is not an http(s) URL of an issue or pull request"
URL_FORMS = (
    "; give it as https://<host>/<owner>/<repo>/pull/<n> or https://<host>/<owner>/<repo>/issues/<n>, "
    "<n> from 1 to 2147483647"
)
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_KINDS = ("pull", "issues")

RunCommand = Callable[..., ExecResult]


class SteerCommandError(FullsendError):
    """``fullsend steer`` cannot go on; ``exit_code`` is ``ExitCode.BAD_INPUT`` or
    ``ExitCode.FAILED`` (a GitHub call failed)."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.BAD_INPUT) -> None:
        self.exit_code = exit_code
        super().__init__(message)


@dataclass(frozen=True)
class ItemUrl:
    """A parsed work-item URL: ``kind`` is ``pull`` or ``issues`` as the URL says."""

    scheme: str
    host: str
    hostname: str
    repo: Repo
    kind: str
    number: int


def shown_url(url: str, limit: int = 100) -> str:
    """``url`` quoted for an error line: without user info, query or anchor, cut at ``limit``."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        parts, host, port = None, "", ""
    if parts is not None and parts.scheme and host:
        text = f"{parts.scheme}://{host}{port}{parts.path}"
    elif parts is not None and parts.scheme and parts.netloc:
        text = f"{parts.scheme}://…{parts.path}"  # a netloc with no host: maybe only credentials
    else:
        text = url.strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


MAX_ITEM_NUMBER = 2_147_483_647  # issue and pull request numbers are a GraphQL Int (signed 32-bit)


def parse_item_url(url: str) -> ItemUrl:
    """Parse ``http(s)://<host>/…/{owner}/{repo}/{issues|pull}/{n}[/…][#…]``.

    The first ``issues``/``pull`` segment preceded by two segments and followed by a decimal
    ``n`` in 1..2147483647 (GitHub's GraphQL ``Int``) wins; later segments, the query and the
    anchor are ignored.  GitLab URLs are recognised only to be refused.  Raises ``SteerCommandError`` (exit 2).
    """
    try:
        parts = urlsplit(url.strip())
        hostname = (parts.hostname or "").lower()
        host = f"{hostname}:{parts.port}" if parts.port else hostname
    except ValueError:
        raise SteerCommandError(f"{NOT_HTTP}: {shown_url(url)}{URL_FORMS}") from None
    if parts.scheme not in ("http", "https") or not hostname:
        raise SteerCommandError(f"{NOT_HTTP}: {shown_url(url)}{URL_FORMS}")
    if _is_gitlab(hostname, parts.path):
        raise SteerCommandError(
            "steering is not supported on GitLab yet; post a stage command such as /fs-review "
            "on the merge request yourself"
        )
    segments = [s for s in parts.path.split("/") if s]
    for i in range(2, len(segments) - 1):
        kind, number = segments[i], segments[i + 1]
        if (
            kind in _KINDS
            and number.isascii()
            and number.isdigit()
            and len(number) <= 10
            and 0 < int(number) <= MAX_ITEM_NUMBER
        ):
            owner, name = segments[i - 2], segments[i - 1]
            if not (_NAME.fullmatch(owner) and _NAME.fullmatch(name)):
                break
            return ItemUrl(parts.scheme, host, hostname, Repo(owner, name), kind, int(number))
    raise SteerCommandError(f"the URL {shown_url(url)} does not name an issue or pull request{URL_FORMS}")


def _is_gitlab(hostname: str, path: str) -> bool:
    return hostname == "gitlab.com" or hostname.startswith("gitlab.") or "/-/merge_requests/" in path


def api_base(item: ItemUrl, env: Mapping[str, str]) -> str:
    """``GITHUB_API_URL`` when set, else the API of the URL's host.

    github.com → ``https://api.github.com``; any other host is GHES: ``<scheme>://<host>/api/v3``
    (normally ``https``; an ``http`` item URL keeps ``http``, so a plain-HTTP GHES or the
    simulator works without ``GITHUB_API_URL``).
    """
    configured = env.get("GITHUB_API_URL", "").strip()
    if configured:
        problem = api_url_problem(configured)
        if problem:
            raise SteerCommandError(problem)
        return configured.rstrip("/")
    if item.hostname in GITHUB_COM_HOSTS:
        return "https://api.github.com"
    return f"{item.scheme}://{item.host}/api/v3"


def resolve_token(env: Mapping[str, str], hostname: str, run: RunCommand = run_command) -> str:
    """``GH_TOKEN``, then ``GITHUB_TOKEN``, then ``gh auth token --hostname <host>``.

    Raises ``SteerCommandError`` (exit 2) when none yields a token.  The token is never printed.
    """
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        value = env.get(name, "").strip()
        if value:
            return value
    try:
        result = run(["gh", "auth", "token", "--hostname", hostname], timeout_s=GH_AUTH_TIMEOUT_S, env=dict(env))
    except SandboxError:
        result = None
    token = result.stdout.strip() if result is not None and result.exit_code == 0 else ""
    if token and "\n" not in token:
        return token
    raise SteerCommandError(
        f"no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or log in with `gh auth login --hostname {hostname}`"
    )


#: The action's other stages: ``fullsend steer`` posts none of their commands (see ``check_stage``).
UNSTEERED_STAGES = {"code": "/fs-code", "retro": "/fs-retro", "prioritize": "/fs-prioritize"}


def check_stage(stage: str | None) -> None:
    """Refuse a ``--stage`` outside review, fix, triage .  Exit 2.

    For the action's other stages (code, retro, prioritize) the message also says why and what
    to do instead: their runs absorb a follow-up the same way, so the user posts the command."""
    if stage is None or stage in STAGE_COMMANDS:
        return
    message = f'--stage must be review, fix or triage, got "{stage}"'
    if stage in UNSTEERED_STAGES:
        command = UNSTEERED_STAGES[stage]
        message += (
            f": fullsend steer posts only /fs-review and /fs-fix on a pull request and /fs-triage on an "
            f"issue, the stages a person refines while they run; to steer a {stage} run in flight, comment "
            f"'{command} <text>' on the item yourself (its Route job checks your permission the same way)"
        )
    raise SteerCommandError(message)


def choose_command(stage: str | None, is_pull_request: bool) -> str:
    """The slash command for ``stage`` on this kind of item.

    No stage: ``/fs-review`` on a pull request, ``/fs-triage`` on an issue.  A pull-request
    stage on an issue raises ``SteerCommandError`` (exit 2).
    """
    check_stage(stage)
    chosen = stage or ("review" if is_pull_request else "triage")
    if chosen in PULL_REQUEST_STAGES and not is_pull_request:
        raise SteerCommandError(f"--stage {chosen} applies to a pull request, and this is an issue")
    return STAGE_COMMANDS[chosen]


def check_text(text: str) -> str:
    """The steer text trimmed; empty or blank raises ``SteerCommandError`` (exit 2)."""
    trimmed = text.strip()
    if not trimmed:
        raise SteerCommandError("the steer text is empty; say what the agent should do differently")
    return trimmed


def steer_body(command: str, text: str) -> str:
    """The comment body ``<command> <text>``; text as :func:`check_text`."""
    return f"{command} {check_text(text)}"


def _is_pull_request(item: ItemUrl, stage: str | None, forge: GitHubForge) -> bool:
    """The URL's answer, or the issue record's when ``/issues/N`` leaves it open and it matters."""
    if item.kind == "pull":
        return True
    if stage == "triage":
        return False
    try:
        return forge.get_issue(item.number).is_pull_request
    except NotFoundError:
        raise SteerCommandError(
            f"{item.repo.full_name}#{item.number} was not found, or the token cannot see it", ExitCode.FAILED
        ) from None
    except ForgeError as exc:
        raise SteerCommandError(f"could not read {item.repo.full_name}#{item.number}: {exc}", ExitCode.FAILED) from None


def post_steer(url: str, text: str, stage: str | None, env: Mapping[str, str], run: RunCommand = run_command) -> str:
    """Validate, post the steer comment and return its ``html_url``.

    Raises ``SteerCommandError`` (exit 2 for input and token problems, 1 for API failures).
    """
    check_stage(stage)
    item = parse_item_url(url)
    check_text(text)  # before any gh call or request
    token = resolve_token(env, item.hostname, run)
    forge = GitHubForge(
        item.repo,
        api_base(item, env),
        env.get("GITHUB_GRAPHQL_URL", ""),
        token,
        "",
        SystemClock(),
        timeout_s=POST_TIMEOUT_S,
    )
    body = steer_body(choose_command(stage, _is_pull_request(item, stage, forge)), text)
    try:
        comment = forge.post_comment(item.number, body)
    except MalformedResponse as exc:
        if exc.status is None or not 200 <= exc.status < 300:
            raise SteerCommandError(f"could not post the steer comment: {exc}{_maybe(item)}", ExitCode.FAILED) from None
        return f"{item.repo.full_name}#{item.number} (posted; GitHub's answer did not say where)"
    except ForgeError as exc:
        # A 5xx, or a connection cut after sending: the post may have taken effect.
        lost = NOTHING_SENT not in str(exc) if exc.status is None else exc.status >= 500
        raise SteerCommandError(
            f"could not post the steer comment: {exc}{_hint(exc.status)}{_maybe(item) if lost else ''}", ExitCode.FAILED
        ) from None
    return comment.html_url or f"{item.repo.full_name}#{item.number} (comment {comment.id})"


_HINTS = {
    401: "the token was refused; check GH_TOKEN / GITHUB_TOKEN or run `gh auth login`",
    403: "the token may not comment on this repository (it needs issues or pull requests write access)",
    404: "the item does not exist, or the token cannot see the repository",
}


def _maybe(item: ItemUrl) -> str:
    return (
        f"; it may have been posted all the same: look at {item.repo.full_name}#{item.number} before you "
        "run fullsend steer again"
    )


def _hint(status: int | None) -> str:
    hint = _HINTS.get(status or 0)
    return f" ({hint})" if hint else ""


def run_steer(
    url: str,
    text: str,
    stage: str | None,
    env: Mapping[str, str],
    out: TextIO,
    err: TextIO,
    run: RunCommand = run_command,
) -> int:
    """The ``fullsend steer`` command: post, print the comment's URL, return the exit code."""
    try:
        html_url = post_steer(url, text, stage, env, run)
    except SteerCommandError as exc:
        err.write(f"fullsend steer: {exc}\n")
        return exc.exit_code
    out.write(f"Posted the steer comment: {html_url}\n")
    return ExitCode.OK
