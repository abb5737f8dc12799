"""The one error boundary: subcommands, exit codes and error lines.

Exit codes: ``fullsend.errors.ExitCode`` (docs/architecture.md "Exit codes").

Errors are ``::error::`` workflow commands inside a runner (``GITHUB_ACTIONS=true``) and one
plain line ``fullsend <command>: <what is wrong, naming the value or path, and the fix>`` on
standard error for a person at a terminal.  No input makes any command print a traceback: a bad
argument is exit 2 with one line, an unexpected error exit 1 with one line.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from fullsend.adapters.gha import Console, in_runner
from fullsend.errors import ConfigError, ExitCode, InputError

if TYPE_CHECKING:  # argparse is imported by the commands that parse: `fullsend run` has nothing to parse
    import argparse

PORT_MAX = 65535
#: What the action's ``command`` input may name (action.yml); the image's entrypoint runs it.
ACTION_COMMANDS = ("run", "route")
#: ``fullsend demo --turn-seconds``: shorter, the follow-up cannot arrive within the first turn
#: (one poll a second); longer is only waiting.
TURN_S_MIN, TURN_S_MAX = 1.0, 60.0


def port_number(text: str) -> int:
    """``--port``: a whole number 0-65535 (0 picks a free port).  Raises ``ArgumentTypeError``."""
    import argparse

    value = text.strip()
    if not (value.isascii() and value.isdigit()) or int(value) > PORT_MAX:
        raise argparse.ArgumentTypeError(f"must be a TCP port from 0 to {PORT_MAX} (0 picks a free one), got {text!r}")
    return int(value)


def turn_seconds(text: str) -> float:
    """``--turn-seconds``: a number of seconds from 1 to 60.  Raises ``ArgumentTypeError``."""
    import argparse

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


def _parser() -> argparse.ArgumentParser:
    import argparse

    from fullsend import __version__
    from fullsend.app.commands.run_help import run_epilog

    class _Parser(argparse.ArgumentParser):
        """``argparse`` with a one-line error: ``<prog>: <message> (see '<prog> --help')``, exit 2."""

        def error(self, message: str) -> NoReturn:
            self.exit(ExitCode.BAD_INPUT, f"{self.prog}: {message} (see '{self.prog} --help')\n")

    parser = _Parser(prog="fullsend", description="steer-action: steer an agent run in flight.")
    parser.add_argument("--version", action="version", version=f"fullsend {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "run",
        help="the action itself (what entrypoint.py runs)",
        description="Run the action: the agent on one issue or pull request, steered by the "
        "follow-up runs that arrive while it works.",
        epilog=run_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo = sub.add_parser("demo", help="one steered run on the built-in GitHub simulator, printed as a timeline")
    demo.add_argument(
        "--turn-seconds",
        type=turn_seconds,
        default=3.0,
        help=f"how long the scripted agent's first turn lasts ({TURN_S_MIN:g}-{TURN_S_MAX:g}; default 3)",
    )
    steer = sub.add_parser("steer", help="post a stage command with your text, so the run in flight absorbs it")
    steer.add_argument("url", help="the issue or pull request URL")
    steer.add_argument("text", help="what the agent should do differently")
    steer.add_argument(
        "--stage", default=None, help="review, fix or triage (default: review on a PR, triage on an issue)"
    )
    lint = sub.add_parser("lint", help="harness warnings, and agent definitions lacking the envelope's opening line")
    lint.add_argument(
        "--harness",
        action="append",
        metavar="FILE",
        help="a harness YAML (repeatable; default: .fullsend/harness/*.yaml)",
    )
    lint.add_argument(
        "--agents", metavar="DIR", default=None, help="agent definitions directory (default: .fullsend/agents)"
    )
    init = sub.add_parser(
        "init",
        help="write a working setup: shim, dispatch workflow, harness, prompts, agents",
        description="Write a commented, working steer-action setup for the stages you pick "
        "(never overwrites; --dry-run prints the files).",
    )
    init.add_argument(
        "--stages",
        default=None,
        help="comma-separated, of triage, code, review, fix, retro, prioritize; or all (default: review; "
        "with --upgrade, what init recorded)",
    )
    init.add_argument("--dir", default=".", help="the repository to write into (default: .)")
    init.add_argument(
        "--runtime",
        default=None,
        choices=("claude", "pi", "codex"),
        help="the agent CLI the jobs run, which picks the model secret they pass (default: claude)",
    )
    init.add_argument("--ref", default=None, help="the steer-action release commit to pin (40 hex digits; required)")
    init.add_argument(
        "--role-token",
        default=None,
        choices=("app", "mint"),
        help="app: a GitHub App token (actions/create-github-app-token); mint: FULLSEND_MINT_URL",
    )
    init.add_argument(
        "--queue",
        default=None,
        choices=("single", "max"),
        help="the stage jobs' concurrency queue (max: every update keeps its own pending run)",
    )
    init.add_argument(
        "--dispatch",
        default=None,
        choices=("hosted", "self-contained"),
        help="hosted (the default): the shim calls the dispatch workflow steer-action hosts, pinned to --ref; "
        "self-contained: also write fullsend-dispatch.yml, every line yours",
    )
    init.add_argument("--dry-run", action="store_true", help="print the files instead of writing them")
    init.add_argument(
        "--upgrade",
        action="store_true",
        help="show what this release would change in a setup init wrote (a diff); writes nothing without --apply",
    )
    init.add_argument(
        "--apply", action="store_true", help="with --upgrade: write new files and the ones you did not change"
    )
    init.add_argument("--force", action="store_true", help="with --upgrade --apply: also replace the files you changed")
    sub.add_parser(
        "route",
        help="the Route job: authorize the event and select at most one stage",
        description="Read the event (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY), decide "
        "which stage it selects and why (docs/rules.md, family Route), print the reason "
        "with its rule id and write the outputs stage, rule and reason to GITHUB_OUTPUT. "
        "Token: INPUT_GITHUB_TOKEN, GITHUB_TOKEN or GH_TOKEN.",
    )
    explain = sub.add_parser("explain", help="read-only: why each follow-up run was or was not absorbed, rule by rule")
    explain.add_argument("url", help="the issue or pull request URL")
    explain.add_argument("--run", metavar="RUN_ID", default=None, help="explain this run instead of the run in flight")
    explain.add_argument(
        "--as-of", metavar="TIME", default=None, help="ignore runs, comments and reviews created after TIME (RFC 3339)"
    )
    explain.add_argument("--json", action="store_true", help="print one JSON document")
    report = sub.add_parser(
        "report",
        help="read-only: what steering saved in a repository, per stage",
        description="Per stage: runs that worked, runs steered, updates absorbed, queued runs that "
        "skipped, agent minutes and US dollars spent and saved (a skip saves about what the run that "
        "absorbed its update spent), and the receipts a queued run would refuse, by rule id. "
        "Token: GH_TOKEN or GITHUB_TOKEN; API: GITHUB_API_URL.",
    )
    report.add_argument("repository", help="owner/repo, or the repository's URL (GHES: its URL or GITHUB_API_URL)")
    report.add_argument(
        "--since",
        metavar="DATE",
        default=None,
        help="start of the window: 2026-11-01 or an RFC 3339 time (default: 30 days ago)",
    )
    report.add_argument("--json", action="store_true", help="print one JSON document (docs/report.schema.json)")
    report.add_argument(
        "--receipt-login",
        metavar="LOGIN",
        default="github-actions[bot]",
        help="the login receipts must be written by: the job token's (default github-actions[bot])",
    )
    review = sub.add_parser(
        "review",
        help="post a pull-request review with line comments (for the review stage's agent)",
        description="Read one JSON document {body, event, comments: [{path, line, body, side, start_line}]} "
        "and post it as one review on the pull request's head, under GH_TOKEN or GITHUB_TOKEN.",
    )
    review.add_argument("url", help="the pull request URL")
    review.add_argument("--file", default="-", help="the review document (default -: standard input)")
    simulator = sub.add_parser("simulator", help="the built-in GitHub simulator (for act runs, demos and debugging)")
    simulator_sub = simulator.add_subparsers(dest="simulator_command", required=True)
    serve = simulator_sub.add_parser("serve", help="serve the simulator on 127.0.0.1, playing a scripted timeline")
    serve.add_argument(
        "--port", type=port_number, default=8765, help="TCP port on 127.0.0.1 (default 8765; 0 picks a free one)"
    )
    serve.add_argument(
        "--scenario", metavar="FILE", default=None, help="scenario YAML/JSON (e.g. examples/scenarios/review-steer.yml)"
    )
    return parser


def _run(console: Console) -> int:
    """``fullsend run``: hold SIGTERM/SIGINT, move the runner's secrets out of this process's
    environment (a re-exec), install the cancellation handlers, then run the action.

    The re-execution comes before the application is imported, so the first process loads only
    this module, ``fullsend.adapters.secrets``, the handoff reader and the signal holder
    (docs/architecture.md "Action lifecycle").  The re-executed process first tries the receipt
    skip on the standard library (docs/architecture.md "Fast skip"); only when that decides
    nothing is the lifecycle imported.  An agent stage (docs/architecture.md "Agent stage") goes
    straight to the work.
    """
    from fullsend.app.action.cancel import Cancellation, block_signals

    block_signals()  # first: a signal from here on is held, across the re-exec, until install()
    from fullsend.adapters.capdrop import own_process
    from fullsend.adapters.secrets import reexec_without_secrets, take_secrets
    from fullsend.app.action.handoff import HandoffError, bootstrap_argv, take_handoff

    try:
        reexec_without_secrets(bootstrap_argv())
    except OSError as exc:
        console.warning(f"Could not move the runner's secrets out of the environment ({exc.strerror}); going on")
    own_process()  # `fullsend run`'s entry: the action's own process, never a host running it in-process
    secrets = take_secrets()
    try:
        handoff = take_handoff(secrets)  # only ever from the memory file, never from the environment
    except HandoffError as exc:
        raise ConfigError(f"{exc}; no child was started") from None
    environ = {**os.environ, **secrets}
    cancellation = Cancellation()
    cancellation.install()  # from here a signal cancels the run; one held since the start lands now
    prefetched = None
    if handoff is None:
        from fullsend.app.action.fastskip import fast_skip

        fast = fast_skip(console, environ, cancellation)  # a receipt skip on the standard library, or nothing
        if fast.exit_code is not None:
            return fast.exit_code
        prefetched = fast.prefetched
    from fullsend.app.action.lifecycle import run_action

    return run_action(console, environ, cancellation=cancellation, prefetched=prefetched, handoff=handoff)


def _dispatch(args: argparse.Namespace, console: Console) -> int:
    """Run the parsed subcommand; returns its exit code (errors propagate to :func:`main`)."""
    if args.command == "run":
        return _run(console)
    if args.command == "demo":
        from fullsend.app.commands.demo import run_demo

        return run_demo(turn_s=args.turn_seconds)
    if args.command == "steer":
        from fullsend.app.commands.steer import run_steer

        return run_steer(args.url, args.text, args.stage, os.environ, sys.stdout, sys.stderr)
    if args.command == "lint":
        from fullsend.app.commands.lint import run_lint

        return run_lint(args.harness, args.agents, sys.stdout, sys.stderr)
    if args.command == "init":
        return _init(args)
    if args.command == "route":
        from fullsend.app.commands.route import run_route

        return run_route(os.environ, console)
    if args.command == "explain":
        from fullsend.app.commands.explain.command import run_explain

        return run_explain(args.url, args.run, args.as_of, args.json, os.environ, sys.stdout, sys.stderr)
    if args.command == "report":
        from fullsend.app.commands.report.command import run_report

        return run_report(
            args.repository, args.since, args.json, args.receipt_login, os.environ, sys.stdout, sys.stderr
        )
    if args.command == "review":
        from fullsend.app.commands.review import run_review

        return run_review(args.url, args.file, os.environ, sys.stdin, sys.stdout, sys.stderr)
    if args.command == "simulator":
        from fullsend.app.commands.simulator import run_simulator_serve

        return run_simulator_serve(args.port, args.scenario)
    return ExitCode.FAILED


def _init(args: argparse.Namespace) -> int:
    """``fullsend init`` (``fullsend.app.commands.init``)."""
    from pathlib import Path

    from fullsend.app.commands.init import InitError, recorded_plan, resolve_plan, run_init, run_upgrade
    from fullsend.app.commands.init_upgrade import read_manifest

    if ((args.apply or args.force) and not args.upgrade) or (args.force and not args.apply):
        sys.stderr.write("fullsend init: --apply goes with --upgrade, and --force with --upgrade --apply\n")
        return ExitCode.BAD_INPUT
    recorded = recorded_plan(read_manifest(Path(args.dir)), Path(args.dir)) if args.upgrade else {}
    try:
        plan = resolve_plan(args.stages, args.runtime, args.ref, args.role_token, args.queue, recorded, args.dispatch)
    except InitError as exc:
        sys.stderr.write(f"fullsend init: {exc}\n")
        return ExitCode.BAD_INPUT
    try:
        if args.upgrade:
            return run_upgrade(plan, Path(args.dir), args.apply, args.force, sys.stdout, sys.stderr)
        return run_init(plan, Path(args.dir), args.dry_run, sys.stdout, sys.stderr)
    except BrokenPipeError:  # `fullsend init --dry-run | head`: the reader has seen enough
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open until exit, so the flush at exit is quiet
        return ExitCode.OK


def _report(console: Console, command: str, message: str, title: str) -> None:
    """One error: ``::error title=…::`` in a runner, else one plain line on standard error."""
    if console.plain:
        one_line = " ".join(part.strip() for part in message.splitlines() if part.strip())
        console.stderr_line(f"fullsend {command}: {one_line}")
    else:
        console.error(message, title=title)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_signals() -> dict[int, Any]:
    """Ctrl-C and SIGTERM stop a command (exit 130) whatever the process inherited: a shell starts
    a background job (``cmd &``) with SIGINT ignored, and Python then installs no handler.
    Returns the previous handlers ({} off the main thread, where none can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, _interrupt) for signum in (signal.SIGINT, signal.SIGTERM)}


def _restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def _image_argv() -> list[str] | None:
    """The image entrypoint's command line: its arguments, else the action's ``command`` input
    (``INPUT_COMMAND``, default ``run``); ``None`` for a command the action does not run."""
    if sys.argv[1:]:
        return sys.argv[1:]
    command = os.environ.get("INPUT_COMMAND", "").strip() or "run"
    return [command] if command in ACTION_COMMANDS else None


def main(argv: Sequence[str] | None = None, *, image: bool = False) -> int:
    """Parse ``argv`` and run one subcommand; returns the process exit code (never raises).

    ``image``: the container's entrypoint (``entrypoint.py``), which may start with SIGTERM and
    SIGINT held: the command line is :func:`_image_argv`, and a command other than ``run`` lets
    the signals in once its handlers are set."""
    if image:
        argv = _image_argv()
        if argv is None:
            shown = os.environ.get("INPUT_COMMAND", "").strip()[:60]
            sys.stdout.write(
                f"::error title=Invalid input::input 'command': {shown!r} is not a command the action "
                f"runs. Set 'command' to one of: {', '.join(ACTION_COMMANDS)}.\n"
            )
            return ExitCode.BAD_INPUT
    if argv is not None and list(argv) == ["run"]:  # the entrypoint and the re-exec: nothing to parse
        from types import SimpleNamespace

        args: Any = SimpleNamespace(command="run")
    else:
        args = _parser().parse_args(list(argv) if argv is not None else None)
    console = Console(plain=not in_runner(os.environ))
    command = args.command + (f" {args.simulator_command}" if args.command == "simulator" else "")
    previous = _stop_on_signals() if args.command != "run" else {}  # run handles its own (app/action/cancel.py)
    if previous:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))  # held by the entrypoint
    try:
        return _dispatch(args, console)
    except InputError as exc:
        where = f" (Outside a workflow this input is INPUT_{exc.input_name.upper()}; see 'fullsend run --help'.)"
        _report(console, command, str(exc) + (where if console.plain else ""), "Invalid input")
        return ExitCode.BAD_INPUT
    except ConfigError as exc:
        _report(console, command, str(exc), "Invalid configuration")
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        console.stderr_line(f"fullsend {command}: interrupted")
        return ExitCode.INTERRUPTED
    except Exception as exc:  # the last resort: one line, and the traceback only inside a runner's group
        _report(
            console, command, f"unexpected error ({type(exc).__name__}: {exc}); please report it", "Unexpected error"
        )
        if not console.plain:
            import traceback

            console.group("Traceback (for the bug report)")
            for line in traceback.format_exc().splitlines():
                console.log(line)
            console.endgroup()
        return ExitCode.FAILED
    finally:
        _restore(previous)


if __name__ == "__main__":
    sys.exit(main())
