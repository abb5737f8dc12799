"""The ``agent_args`` input: extra arguments for the runtime's CLI, and the flags the action owns.

The action owns the flags that carry its protocol with the agent (input/output formats, print
mode, session plumbing; docs/architecture.md "Claude Code", "pi", "Codex"); an ``agent_args``
line naming one of them is refused before any request.  Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Per runtime, the arguments the action sets itself (a ``--flag=value`` form counts too).
OWNED_FLAGS: dict[str, frozenset[str]] = {
    "claude": frozenset(
        {
            "-p",
            "--print",
            "--verbose",
            "--input-format",
            "--output-format",
            "--replay-user-messages",
            "-r",
            "--resume",
            "-c",
            "--continue",
            "--session-id",
            "--fork-session",
        }
    ),
    "pi": frozenset(
        {
            "--mode",
            "--session",
            "--session-id",
            "--session-dir",
            "--no-session",
            "-c",
            "--continue",
            "-r",
            "--resume",
            "-p",
            "--print",
        }
    ),
    "codex": frozenset(
        {"exec", "e", "resume", "--json", "--experimental-json", "--last", "app-server", "--listen", "--stdio"}
    ),
}


def split_agent_args(text: str) -> tuple[str, ...]:
    """One argument per line of ``text``; surrounding white space and empty lines are dropped."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def owned_flags_in(args: Iterable[str], runtime: str) -> list[str]:
    """The arguments of ``args`` that the action owns for ``runtime``, in order (``--f=v`` → ``--f``)."""
    owned = OWNED_FLAGS.get(runtime, frozenset())
    found = []
    for arg in args:
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if name in owned:
            found.append(name)
    return found
