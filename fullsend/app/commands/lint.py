"""``fullsend lint [--harness FILE]… [--agents DIR]`` (docs/architecture.md "Commands").

Checks, each with a kebab-case rule id:

* ``steer-enabled-unset`` — a harness sets ``pre_script`` but not ``steer.enabled``
  (docs/architecture.md "Harness");
* ``unknown-key`` — a harness key steer-action ignores;
* ``harness-invalid`` — a harness the action would refuse to load (bad YAML, a value out of bounds);
* ``agent-missing-opening-line`` — an agent definition (``<agents>/*.md``) that does not contain
  the envelope's opening line (WIRE ``fullsend.core.text.wire.OPENING_LINE``), so it would read a
  delivered update as ordinary content.

Without ``--harness`` the harness files in ``.fullsend/harness/`` (``*.yaml``, ``*.yml``) are
checked; ``--agents`` defaults to ``.fullsend/agents``.  One line per finding on stdout:
``<file>: <severity>: <field>: <message> [<rule>]``.  Exit 1 when there is any finding, 0 when
there is none, 2 when a path given on the command line cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from fullsend.core.text.wire import OPENING_LINE
from fullsend.errors import ConfigError, ExitCode
from fullsend.harness import harness_diagnostics, load_harness
from fullsend.rules import RULE_AGENT_MISSING_OPENING_LINE, RULE_HARNESS_INVALID

DEFAULT_HARNESS_DIR = Path(".fullsend/harness")
DEFAULT_AGENTS_DIR = Path(".fullsend/agents")


@dataclass(frozen=True)
class Finding:
    """One lint finding: the ``path`` as given, its ``rule`` id, ``field`` (may be empty),
    ``message`` (our wording) and ``severity`` (``warning`` or ``error``)."""

    path: str
    rule: str
    field: str
    message: str
    severity: str = "warning"

    def line(self) -> str:
        """``<file>: <severity>: [<field>: ]<message> [<rule>]`` — the printed form."""
        field = f"{self.field}: " if self.field else ""
        return f"{self.path}: {self.severity}: {field}{self.message} [{self.rule}]"


class LintInputError(Exception):
    """A path named on the command line does not exist or cannot be read (exit 2)."""


def lint_harness_file(path: Path) -> list[Finding]:
    """The findings for one harness file (its diagnostics and unknown keys), or ``harness-invalid``.

    Raises ``LintInputError`` when the file does not exist.
    """
    if not path.is_file():
        raise LintInputError(f"harness file {path} does not exist")
    try:
        harness = load_harness(path)
    except ConfigError as exc:
        return [Finding(str(path), RULE_HARNESS_INVALID, "", f"the action would refuse it: {exc}", "error")]
    return [Finding(str(path), d.rule, d.field, d.message, d.severity) for d in harness_diagnostics(harness)]


def lint_agents_dir(directory: Path) -> list[Finding]:
    """Agent definitions ``directory/*.md`` lacking the envelope's opening line, sorted by name.

    A file that cannot be read as UTF-8 is reported under the same rule (it cannot carry the
    line either).  Raises ``LintInputError`` when ``directory`` is not a directory.
    """
    if not directory.is_dir():
        raise LintInputError(f"agents directory {directory} does not exist")
    findings = []
    for path in sorted(directory.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if OPENING_LINE not in text:
            findings.append(Finding(str(path), RULE_AGENT_MISSING_OPENING_LINE, "", AGENT_MESSAGE))
    return findings


AGENT_MESSAGE = (
    f'the definition does not contain the envelope\'s opening line "{OPENING_LINE}", so the agent '
    "would treat a steered update as ordinary content; teach it the envelope (or regenerate it), "
    "or opt its harness out with steer: {enabled: false}"
)


def default_harness_files(root: Path) -> list[Path]:
    """``.fullsend/harness/*.yaml`` and ``*.yml`` under ``root``, sorted (empty when absent)."""
    directory = root / DEFAULT_HARNESS_DIR
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def collect_findings(harness_files: Iterable[Path], agents_dir: Path | None) -> list[Finding]:
    """Every finding of the given harness files, then of the agents directory (``None``: skip).

    Raises ``LintInputError`` for a missing file or directory.
    """
    findings: list[Finding] = []
    for path in harness_files:
        findings.extend(lint_harness_file(path))
    if agents_dir is not None:
        findings.extend(lint_agents_dir(agents_dir))
    return findings


def run_lint(harness: Sequence[str] | None, agents: str | None, out: TextIO, err: TextIO,
             root: Path = Path(".")) -> int:
    """The ``fullsend lint`` command; returns the exit code (0 clean, 1 findings, 2 bad path).

    ``harness`` are the ``--harness`` values (``None``: the default directory under ``root``);
    ``agents`` the ``--agents`` value (``None``: ``root/.fullsend/agents`` when it exists).
    """
    files = [Path(h) for h in harness] if harness else default_harness_files(root)
    agents_dir: Path | None = Path(agents) if agents else root / DEFAULT_AGENTS_DIR
    if agents is None and not (root / DEFAULT_AGENTS_DIR).is_dir():
        agents_dir = None
    try:
        findings = collect_findings(files, agents_dir)
    except LintInputError as exc:
        err.write(f"fullsend lint: {exc}\n")
        return ExitCode.BAD_INPUT
    for finding in findings:
        out.write(finding.line() + "\n")
    checked = f"{len(files)} harness file(s)" + (f" and the agent definitions in {agents_dir}" if agents_dir else "")
    err.write(f"fullsend lint: {len(findings)} finding(s) in {checked}\n")
    return ExitCode.FAILED if findings else ExitCode.OK
