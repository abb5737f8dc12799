"""The one error boundary: subcommands, exit codes and error lines.

Exit codes: ``fullsend.errors.ExitCode`` (docs/architecture.md "Exit codes").

Errors are ``::error::`` workflow commands inside a runner (``GITHUB_ACTIONS=true``) and one
plain line ``fullsend <command>: <what is wrong, naming the value or path, and the fix>`` on
standard error for a person at a terminal.  No input makes any command print a traceback: a bad
argument is exit 2 with one line, an unexpected error exit 1 with one line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fullsend.adapters.gha import Console, in_runner
from fullsend.app.action.confinement.deployment import SHIPPED, Deployment
from fullsend.errors import ConfigError, ExitCode, InputError

if TYPE_CHECKING:  # argparse is imported by the commands that parse: `fullsend run` has nothing to parse
    import argparse

#: What the action's ``command`` input may name (action.yml); the image's entrypoint runs it.
ACTION_COMMANDS = ("run", "route")


def _run(console: Console, deployment: Deployment) -> int:
    """``fullsend run``: hold SIGTERM/SIGINT, move the runner's secrets out of this process's
    environment (a re-exec of ``deployment``'s entry), install the cancellation handlers, then
    run the action.

    The re-execution comes before the application is imported, so the first process loads only
    this module, ``fullsend.adapters.secrets``, the handoff reader and the signal holder
    (docs/architecture.md "Action lifecycle").  The re-executed process first tries the receipt
    skip on the forge (docs/architecture.md "Fast skip"); only when that decides nothing is the
    lifecycle imported, and it goes on with that forge.  An agent stage (docs/architecture.md "Agent stage") goes
    straight to the work.
    """
    from fullsend.app.action.cancel import Cancellation, block_signals

    block_signals()  # first: a signal from here on is held, across the re-exec, until install()
    from fullsend.adapters.confinement.capdrop import own_process
    from fullsend.adapters.secrets import reexec_without_secrets, take_secrets
    from fullsend.app.action.confinement.handoff import HandoffError, take_handoff

    try:
        reexec_without_secrets(deployment.reexec_argv())
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
    fast = None
    if handoff is None:
        from fullsend.app.action.skip.fastskip import fast_skip

        fast = fast_skip(console, environ, cancellation)  # the pre-flight on the forge, before the app loads
        if fast.exit_code is not None:
            return fast.exit_code
    from fullsend.app.action.lifecycle import run_action

    return run_action(console, environ, cancellation=cancellation, fast=fast, handoff=handoff, deployment=deployment)


def _dispatch(args: argparse.Namespace, console: Console, deployment: Deployment) -> int:
    """Run the parsed subcommand; returns its exit code (errors propagate to :func:`main`)."""
    if args.command == "run":
        return _run(console, deployment)
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

        return run_explain(
            args.url,
            args.run,
            args.as_of,
            args.json,
            os.environ,
            sys.stdout,
            sys.stderr,
            receipt_issuer=args.receipt_issuer,
            allow_unsigned=args.allow_unsigned_receipts,
        )
    if args.command == "report":
        from fullsend.app.commands.report.command import run_report

        return run_report(
            args.repository,
            args.since,
            args.json,
            args.receipt_login,
            os.environ,
            sys.stdout,
            sys.stderr,
            receipt_issuer=args.receipt_issuer,
            allow_unsigned=args.allow_unsigned_receipts,
        )
    if args.command == "review":
        from fullsend.app.commands.review import run_review

        return run_review(args.url, args.file, os.environ, sys.stdin, sys.stdout, sys.stderr)
    if args.command == "simulator":
        from fullsend.app.commands.simulator import run_simulator_serve

        return run_simulator_serve(args.port, args.scenario, repository=args.repository)
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


def main(argv: Sequence[str] | None = None, *, image: bool = False, deployment: Deployment = SHIPPED) -> int:
    """Parse ``argv`` and run one subcommand; returns the process exit code (never raises).

    ``image``: the container's entrypoint (``entrypoint.py``), which may start with SIGTERM and
    SIGINT held: the command line is :func:`_image_argv`, and a command other than ``run`` lets
    the signals in once its handlers are set.  ``deployment``: what ``fullsend run`` runs
    (``fullsend.app.action.confinement.deployment``); this package's entries never pass one, so
    they run ``SHIPPED``."""
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
        from fullsend.app.commands.parser import build_parser

        args = build_parser().parse_args(list(argv) if argv is not None else None)
    console = Console(plain=not in_runner(os.environ))
    command = args.command + (f" {args.simulator_command}" if args.command == "simulator" else "")
    previous = _stop_on_signals() if args.command != "run" else {}  # run handles its own (app/action/cancel.py)
    if previous:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))  # held by the entrypoint
    try:
        return _dispatch(args, console, deployment)
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
