"""The one error boundary: subcommands, exit codes and ``::error::`` lines.

Exit codes: ``fullsend.errors.ExitCode`` (docs/architecture.md "Exit codes").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fullsend.adapters.gha import Console
from fullsend.errors import ConfigError, ExitCode, InputError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fullsend", description="steer-action: steer an agent run in flight.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="the action itself (what entrypoint.py runs)")
    demo = sub.add_parser("demo", help="one steered run on the built-in GitHub simulator, printed as a timeline")
    demo.add_argument("--turn-seconds", type=float, default=3.0, help="how long the scripted agent's first turn lasts")
    steer = sub.add_parser("steer", help="post a stage command with your text, so the run in flight absorbs it")
    steer.add_argument("url", help="the issue or pull request URL")
    steer.add_argument("text", help="what the agent should do differently")
    steer.add_argument("--stage", default=None,
                       help="review, fix or triage (default: review on a PR, triage on an issue)")
    lint = sub.add_parser("lint", help="harness warnings, and agent definitions lacking the envelope's opening line")
    lint.add_argument("--harness", action="append", metavar="FILE",
                      help="a harness YAML (repeatable; default: .fullsend/harness/*.yaml)")
    lint.add_argument("--agents", metavar="DIR", default=None,
                      help="agent definitions directory (default: .fullsend/agents)")
    explain = sub.add_parser("explain", help="read-only: why each follow-up run was or was not absorbed, rule by rule")
    explain.add_argument("url", help="the issue or pull request URL")
    explain.add_argument("--run", metavar="RUN_ID", default=None, help="explain this run instead of the run in flight")
    explain.add_argument("--as-of", metavar="TIME", default=None,
                         help="ignore runs, comments and reviews created after TIME (RFC 3339)")
    explain.add_argument("--json", action="store_true", help="print one JSON document")
    simulator = sub.add_parser("simulator", help="the built-in GitHub simulator (for act runs, demos and debugging)")
    simulator_sub = simulator.add_subparsers(dest="simulator_command", required=True)
    serve = simulator_sub.add_parser("serve", help="serve the simulator on 127.0.0.1, playing a scripted timeline")
    serve.add_argument("--port", type=int, default=8765,
                       help="TCP port on 127.0.0.1 (default 8765; 0 picks a free one)")
    serve.add_argument("--scenario", metavar="FILE", default=None,
                       help="scenario YAML/JSON (e.g. examples/scenarios/review-steer.yml)")
    return parser


def _run(console: Console) -> int:
    """``fullsend run``: hold SIGTERM/SIGINT, move the runner's secrets out of this process's
    environment (a re-exec), install the cancellation handlers, then run the action.

    The re-execution comes before the application is imported, so the first process loads only
    this module, ``fullsend.adapters.secrets`` and the signal holder (docs/architecture.md
    "Action lifecycle").
    """
    from fullsend.app.action.cancel import Cancellation, block_signals

    block_signals()  # first: a signal from here on is held, across the re-exec, until install()
    import os
    from pathlib import Path

    from fullsend.adapters.secrets import reexec_without_secrets, take_secrets
    package_parent = str(Path(__file__).resolve().parent.parent)
    bootstrap = (f"import sys; sys.path.insert(0, {package_parent!r}); from fullsend.__main__ import main; "
                 "sys.exit(main(['run']))")
    try:
        reexec_without_secrets(["-c", bootstrap])
    except OSError as exc:
        console.warning(f"Could not move the runner's secrets out of the environment ({exc.strerror}); going on")
    environ = {**os.environ, **take_secrets()}
    from fullsend.app.action.lifecycle import run_action

    cancellation = Cancellation()
    cancellation.install()  # from here a signal cancels the run; one held since the start lands now
    return run_action(console, environ, cancellation=cancellation)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run one subcommand; returns the process exit code."""
    args = _parser().parse_args(list(argv) if argv is not None else None)
    console = Console()
    try:
        if args.command == "run":
            return _run(console)
        if args.command == "demo":
            from fullsend.app.commands.demo import run_demo
            return run_demo(turn_s=args.turn_seconds)
        if args.command == "steer":
            import os

            from fullsend.app.commands.steer import run_steer
            return run_steer(args.url, args.text, args.stage, os.environ, sys.stdout, sys.stderr)
        if args.command == "lint":
            from fullsend.app.commands.lint import run_lint
            return run_lint(args.harness, args.agents, sys.stdout, sys.stderr)
        if args.command == "explain":
            import os

            from fullsend.app.commands.explain.command import run_explain
            return run_explain(args.url, args.run, args.as_of, args.json, os.environ, sys.stdout, sys.stderr)
        if args.command == "simulator":
            from fullsend.app.commands.simulator import run_simulator_serve
            return run_simulator_serve(args.port, args.scenario)
    except InputError as exc:
        console.error(str(exc), title="Invalid input")
        return ExitCode.BAD_INPUT
    except ConfigError as exc:
        console.error(str(exc), title="Invalid configuration")
        return ExitCode.BAD_INPUT
    return ExitCode.FAILED


if __name__ == "__main__":
    sys.exit(main())
