"""Read a step's log the way the Actions runner does: which lines it would take as workflow
commands, and what ``GITHUB_OUTPUT`` holds.

The runner looks at every line of a step's stdout AND stderr.  A line is a command when it starts
with ``::name props::message`` (or the legacy ``##[name props]message``); ``::stop-commands::T``
turns command processing off until a line ``::T::``.  This reader follows those rules, so a test
can ask "which annotations, masks and outputs would this log have produced?".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The command name runs to the first blank or "::" (a stop token may start with a digit).
_V2 = re.compile(r"^::(?P<name>[^\s:]+)(?:\s+(?P<props>(?:(?!::).)*))?::(?P<message>.*)$")
_V1 = re.compile(r"^##\[(?P<name>[^\s\]]+)(?:\s+(?P<props>[^\]]*))?\](?P<message>.*)$")
ANNOTATIONS = frozenset({"error", "warning", "notice"})


def unescape_data(value: str) -> str:
    """Undo the runner's message escaping (``%0D``, ``%0A``, ``%25``)."""
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


@dataclass(frozen=True)
class WorkflowCommand:
    """One command the runner would act on: ``name``, its properties and its message."""

    name: str
    props: tuple[tuple[str, str], ...]
    message: str
    stream: str = "stdout"


@dataclass
class StepLog:
    """What the runner makes of a step's log: every processed command, in order."""

    commands: list[WorkflowCommand] = field(default_factory=list)

    def named(self, *names: str) -> list[WorkflowCommand]:
        return [c for c in self.commands if c.name in names]

    @property
    def annotations(self) -> list[WorkflowCommand]:
        return [c for c in self.commands if c.name in ANNOTATIONS]

    @property
    def masks(self) -> set[str]:
        return {c.message for c in self.commands if c.name == "add-mask"}

    @property
    def set_outputs(self) -> dict[str, str]:
        return {dict(c.props).get("name", ""): c.message for c in self.commands if c.name == "set-output"}


def _parse(line: str) -> tuple[str, tuple[tuple[str, str], ...], str] | None:
    stripped = line.strip()
    match = _V2.match(stripped)
    sep = ","
    if match is None:
        match, sep = _V1.match(stripped), ";"
    if match is None:
        return None
    props = []
    for part in (match.group("props") or "").split(sep):
        if "=" in part:
            key, value = part.split("=", 1)
            props.append((key.strip(), unescape_data(value)))
    return match.group("name").lower(), tuple(props), unescape_data(match.group("message"))


def read_step_log(text: str, stream: str = "stdout") -> StepLog:
    """The commands the runner would process in ``text`` (one stream of the step's log)."""
    log = StepLog()
    resume_token: str | None = None
    for line in text.split("\n"):
        parsed = _parse(line.rstrip("\r"))
        if parsed is None:
            continue
        name, props, message = parsed
        if resume_token is not None:
            if name == resume_token.lower():
                resume_token = None
            continue
        if name == "stop-commands":
            resume_token = message
            continue
        log.commands.append(WorkflowCommand(name, props, message, stream))
    return log


def parse_output_file(text: str) -> dict[str, str]:
    """Parse ``GITHUB_OUTPUT`` as the runner does (``name=value`` and ``name<<DELIM`` forms).

    Raises ``ValueError`` on a heredoc whose delimiter never comes (the runner fails the step).
    """
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
        elif "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)  # ValueError when missing
            out[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        else:
            name, _, value = line.partition("=")
            out[name] = value
            i += 1
    return out
