"""The command line's grammar: ``fullsend``'s subcommands, their arguments and their types.

The grammar is a table (``COMMANDS``: one ``Command`` per subcommand, one ``Arg`` per argument);
only :func:`build_parser` builds the parser from it (argparse is imported here, never by ``fullsend run``, which has
nothing to parse); the error boundary that runs the commands is ``fullsend/__main__.py``
(docs/architecture.md "Exit codes").
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from fullsend.errors import ExitCode

PORT_MAX = 65535
#: ``fullsend demo --turn-seconds``: shorter, the follow-up cannot arrive within the first turn
#: (one poll a second); longer is only waiting.
TURN_S_MIN, TURN_S_MAX = 1.0, 60.0


def port_number(text: str) -> int:
    """``--port``: a whole number 0-65535 (0 picks a free port).  Raises ``ArgumentTypeError``."""
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or int(value) > PORT_MAX:
        raise argparse.ArgumentTypeError(f"must be a TCP port from 0 to {PORT_MAX} (0 picks a free one), got {text!r}")
    return int(value)


def issuer_url(text: str) -> str:
    """``--receipt-issuer``: an issuer URL the action's input ``receipt_issuer`` would accept
    (``https://``, or ``http://`` on loopback, no ``user@``), without a trailing ``/``.  Raises
    ``ArgumentTypeError``."""
    from fullsend.core.tokens.policy import mint_url_allowed

    value = text.strip()
    if value and not mint_url_allowed(value):
        raise argparse.ArgumentTypeError(
            f"must be an https:// URL (http:// only for localhost or 127.0.0.1), with no user@ part, got {text!r}"
        )
    return value.rstrip("/")


def turn_seconds(text: str) -> float:
    """``--turn-seconds``: a number of seconds from 1 to 60.  Raises ``ArgumentTypeError``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and TURN_S_MIN <= value <= TURN_S_MAX):
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds from {TURN_S_MIN:g} to {TURN_S_MAX:g} (the scripted "
            f"agent's first turn; the follow-up must arrive within it), got {text!r}"
        )
    return value


@dataclass(frozen=True)
class Arg:
    """One argument: its ``flags`` (a name, or ``--options``) and ``add_argument``'s keywords."""

    flags: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


def arg(*flags: str, **options: Any) -> Arg:
    """An ``Arg`` written as the ``add_argument`` call it stands for."""
    return Arg(flags, options)


@dataclass(frozen=True)
class Command:
    """One subcommand: ``help`` in the command list, ``description`` on its own ``--help``, its
    ``args``; ``epilog`` (called when the parser is built) ends its help verbatim; ``commands``
    are its own subcommands, chosen into ``dest``."""

    name: str
    help: str
    description: str | None = None
    args: tuple[Arg, ...] = ()
    epilog: Callable[[], str] | None = None
    commands: tuple[Command, ...] = ()
    dest: str = ""


def _run_epilog() -> str:
    from fullsend.app.commands.run_help import run_epilog

    return run_epilog()


#: How receipts are checked, as the action's inputs of those names say (docs/rules.md "Receipt proof").
RECEIPT_PROOF_ARGS = (
    arg(
        "--receipt-issuer",
        metavar="URL",
        default="",
        type=issuer_url,
        help="the OIDC issuer that signs receipts (default: the one the API's server implies, e.g. "
        "https://token.actions.githubusercontent.com)",
    ),
    arg(
        "--allow-unsigned-receipts",
        action="store_true",
        help="count unsigned receipts too, as the input allow_unsigned_receipts does (any workflow could write one)",
    ),
)

COMMANDS: tuple[Command, ...] = (
    Command(
        "run",
        "the action itself (what entrypoint.py runs)",
        "Run the action: the agent on one issue or pull request, steered by the "
        "follow-up runs that arrive while it works.",
        epilog=_run_epilog,
    ),
    Command(
        "demo",
        "one steered run on the built-in GitHub simulator, printed as a timeline",
        args=(
            arg(
                "--turn-seconds",
                type=turn_seconds,
                default=3.0,
                help=f"how long the scripted agent's first turn lasts ({TURN_S_MIN:g}-{TURN_S_MAX:g}; default 3)",
            ),
        ),
    ),
    Command(
        "steer",
        "post a stage command with your text, so the run in flight absorbs it",
        "Post the stage's slash command with your text as a comment. Token: GH_TOKEN or "
        "GITHUB_TOKEN; API: GITHUB_API_URL, else the URL's host.",
        (
            arg("url", help="the issue or pull request URL"),
            arg("text", help="what the agent should do differently"),
            arg("--stage", default=None, help="review, fix or triage (default: review on a PR, triage on an issue)"),
        ),
    ),
    Command(
        "lint",
        "harness warnings, and agent definitions lacking the envelope's opening line",
        "Read the harness files and agent definitions of the current directory (no token, no "
        "network). Exit 0 clean, 1 findings, 2 a bad path or nothing to check.",
        (
            arg(
                "--harness",
                action="append",
                metavar="FILE",
                help="a harness YAML (repeatable; default: .fullsend/harness/*.yaml)",
            ),
            arg(
                "--agents", metavar="DIR", default=None, help="agent definitions directory (default: .fullsend/agents)"
            ),
        ),
    ),
    Command(
        "init",
        "write a working setup: shim, dispatch workflow, harness, prompts, agents",
        "Write a commented, working steer-action setup for the stages you pick "
        "(never overwrites; --dry-run prints the files). No token. Reads steer-action's release tags "
        "(git ls-remote GITHUB_SERVER_URL/fullsend-ai/steer-action, default https://github.com) to tell "
        "whether --ref is a release; GITHUB_API_URL ending in /api/v3 means GitHub Enterprise Server.",
        (
            arg(
                "--stages",
                default=None,
                help="comma-separated, of triage, code, review, fix, retro, prioritize; or all (default: review; "
                "with --upgrade, what init recorded)",
            ),
            arg("--dir", default=".", help="the repository to write into (default: .)"),
            arg(
                "--runtime",
                default=None,
                choices=("claude", "pi", "codex"),
                help="the agent CLI the jobs run, which picks the model secret they pass (default: claude)",
            ),
            arg("--ref", default=None, help="the steer-action release commit to pin (40 hex digits; required)"),
            arg(
                "--role-token",
                default=None,
                choices=("app", "mint"),
                help="app: a GitHub App token (actions/create-github-app-token); mint: FULLSEND_MINT_URL",
            ),
            arg(
                "--queue",
                default=None,
                choices=("single", "max"),
                help="the stage jobs' concurrency queue (max: every update keeps its own pending run)",
            ),
            arg(
                "--dispatch",
                default=None,
                choices=("hosted", "self-contained"),
                help="hosted (the default): the shim calls the dispatch workflow steer-action hosts, pinned to "
                "--ref; self-contained: also write fullsend-dispatch.yml, every line yours",
            ),
            arg("--dry-run", action="store_true", help="print the files instead of writing them"),
            arg(
                "--upgrade",
                action="store_true",
                help="show what this release would change in a setup init wrote (a diff); writes nothing without "
                "--apply",
            ),
            arg("--apply", action="store_true", help="with --upgrade: write new files and the ones you did not change"),
            arg("--force", action="store_true", help="with --upgrade --apply: also replace the files you changed"),
        ),
    ),
    Command(
        "route",
        "the Route job: authorize the event and select at most one stage",
        "Read the event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY), decide "
        "which stage it selects and why (docs/rules.md, family Route), print the reason "
        "with its rule id and write the outputs stage, rule and reason to GITHUB_OUTPUT. "
        "Token: INPUT_GITHUB_TOKEN, GITHUB_TOKEN or GH_TOKEN.",
    ),
    Command(
        "explain",
        "read-only: why each follow-up run was or was not absorbed, rule by rule",
        "Read the item's workflow runs, jobs, comments and receipts. Token: GH_TOKEN or "
        "GITHUB_TOKEN (read access); API: GITHUB_API_URL, else the URL's host (GraphQL: GITHUB_GRAPHQL_URL).",
        (
            arg("url", help="the issue or pull request URL"),
            arg("--run", metavar="RUN_ID", default=None, help="explain this run instead of the run in flight"),
            arg(
                "--as-of",
                metavar="TIME",
                default=None,
                help="ignore runs, comments and reviews created after TIME (RFC 3339)",
            ),
            arg("--json", action="store_true", help="print one JSON document"),
            *RECEIPT_PROOF_ARGS,
        ),
    ),
    Command(
        "report",
        "read-only: what steering saved in a repository, per stage",
        "Per stage: runs that worked, runs steered, updates absorbed, queued runs that "
        "skipped, agent minutes and US dollars spent and saved (a skip saves about what the run that "
        "absorbed its update spent), and the receipts a queued run would refuse, by rule id. "
        "Token: GH_TOKEN or GITHUB_TOKEN; API: GITHUB_API_URL.",
        (
            arg("repository", help="owner/repo, or the repository's URL (GHES: its URL or GITHUB_API_URL)"),
            arg(
                "--since",
                metavar="DATE",
                default=None,
                help="start of the window: 2026-11-01 or an RFC 3339 time (default: 30 days ago)",
            ),
            arg("--json", action="store_true", help="print one JSON document (docs/report.schema.json)"),
            arg(
                "--receipt-login",
                metavar="LOGIN",
                default="github-actions[bot]",
                help="the login receipts must be written by: the job token's (default github-actions[bot])",
            ),
            *RECEIPT_PROOF_ARGS,
        ),
    ),
    Command(
        "review",
        "post a pull-request review with line comments (for the review stage's agent)",
        "Read one JSON document {commit_id, body, event, comments: [{path, line, body, side, "
        "start_line}]} and post it as one review of commit_id (the commit you read: git rev-parse HEAD; in a "
        "run, empty means FULLSEND_RUN_HEAD_SHA, the head the run started on; outside a run it is required). "
        "event: COMMENT, APPROVE or REQUEST_CHANGES. Token: GH_TOKEN or GITHUB_TOKEN; API: GITHUB_API_URL, "
        "else the URL's host.",
        (
            arg("url", help="the pull request URL (…/pull/N; an /issues/N URL is refused)"),
            arg("--file", default="-", help="the review document (default -: standard input)"),
        ),
    ),
    Command(
        "simulator",
        "the built-in GitHub simulator (for act runs, demos and debugging)",
        dest="simulator_command",
        commands=(
            Command(
                "serve",
                "serve the simulator on 127.0.0.1, playing a scripted timeline",
                args=(
                    arg(
                        "--port",
                        type=port_number,
                        default=8765,
                        help="TCP port on 127.0.0.1 (default 8765; 0 picks a free one)",
                    ),
                    arg(
                        "--scenario",
                        metavar="FILE",
                        default=None,
                        help="scenario YAML/JSON (e.g. examples/scenarios/review-steer.yml)",
                    ),
                    arg(
                        "--repository",
                        metavar="DIR",
                        default=None,
                        help="serve DIR's files as the repository over git, for the workflows' checkouts "
                        "(a work directory of tools/act/workdir.sh)",
                    ),
                ),
            ),
        ),
    ),
)


class _Parser(argparse.ArgumentParser):
    """``argparse`` with a one-line error: ``<prog>: <message> (see '<prog> --help')``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``fullsend`` parser built from ``COMMANDS``: one subparser per command; a bad argument
    exits 2 with one line."""
    from fullsend import __version__

    parser = _Parser(prog="fullsend", description="steer-action: steer an agent run in flight.")
    parser.add_argument("--version", action="version", version=f"fullsend {__version__}")
    _add_commands(parser, COMMANDS, "command")
    return parser


def _add_commands(parser: argparse.ArgumentParser, commands: tuple[Command, ...], dest: str) -> None:
    """One required subparser per ``Command`` of ``commands``, its choice stored in ``dest``."""
    sub = parser.add_subparsers(dest=dest, required=True)
    for command in commands:
        extra: dict[str, Any] = {}
        if command.description is not None:
            extra["description"] = command.description
        if command.epilog is not None:
            extra.update(epilog=command.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
        child = sub.add_parser(command.name, help=command.help, **extra)
        for argument in command.args:
            child.add_argument(*argument.flags, **argument.options)
        if command.commands:
            _add_commands(child, command.commands, command.dest)
