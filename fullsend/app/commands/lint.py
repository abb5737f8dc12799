"""``fullsend lint [--harness FILE]… [--agents DIR]`` (docs/architecture.md "Commands").

Checks, each with a kebab-case rule id:

* ``steer-enabled-unset`` — a harness sets ``pre_script`` but not ``steer.enabled``
  (docs/architecture.md "Harness");
* ``unknown-key`` — a harness key steer-action ignores;
* ``harness-invalid`` — a harness the action would refuse to load (bad YAML, a value out of bounds);
* ``agent-missing-opening-line`` — an agent definition (``<agents>/*.md``) that does not contain
  the envelope's opening line (WIRE ``fullsend.core.wire.OPENING_LINE``), so it would read a
  delivered update as ordinary content.

Without ``--harness`` the harness files in ``.fullsend/harness/`` (``*.yaml``, ``*.yml``) are
checked; ``--agents`` defaults to ``.fullsend/agents``.  One line per finding on stdout:
``<file>: <severity>: <field>: <message> [<rule>]``.  Exit 1 when there is any finding, 0 when
there is none, 2 when a path given on the command line cannot be read or a ``--harness`` file is
not a harness (a GitHub workflow or action metadata with no harness key).  When there is nothing
to check (no harness file, no agents directory) it says so and where it looked, and exits 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from fullsend.core.wire import OPENING_LINE
from fullsend.errors import ConfigError, ExitCode
from fullsend.harness import KNOWN_KEYS, TEXT_KEYS, Harness, harness_diagnostics, load_harness
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


#: Top-level keys of a GitHub workflow (``on`` reads as YAML's true) or of action metadata.
NOT_HARNESS_KEYS = {
    "jobs": "a GitHub workflow",
    "True": "a GitHub workflow",
    "on": "a GitHub workflow",
    "runs": "an action's metadata (action.yml)",
}


def not_a_harness(harness: Harness) -> str:
    """What the file looks like instead ("a GitHub workflow", …) when it has no harness key and
    a key of a workflow or of action metadata; "" for a harness (an empty file is one)."""
    if harness.steer.present or any(getattr(harness, key) for key in TEXT_KEYS):
        return ""
    return next((NOT_HARNESS_KEYS[k] for k in harness.unknown_keys if k in NOT_HARNESS_KEYS), "")


def lint_harness_file(path: Path) -> list[Finding]:
    """The findings for one harness file (its diagnostics and unknown keys), or ``harness-invalid``.

    Raises ``LintInputError`` when the file does not exist or is not a harness (``not_a_harness``).
    """
    if not path.is_file():
        raise LintInputError(
            f"harness file {path} does not exist; give --harness a harness YAML (they live in {DEFAULT_HARNESS_DIR}/)"
        )
    try:
        harness = load_harness(path)
    except ConfigError as exc:
        return [Finding(str(path), RULE_HARNESS_INVALID, "", f"the action would refuse it: {exc}", "error")]
    looks_like = not_a_harness(harness)
    if looks_like:
        raise LintInputError(
            f"{path} is not a harness: it looks like {looks_like}, and a harness has the keys "
            f"{', '.join(sorted(KNOWN_KEYS))}; give --harness a harness YAML "
            f"(they live in {DEFAULT_HARNESS_DIR}/)"
        )
    return [Finding(str(path), d.rule, d.field, d.message, d.severity) for d in harness_diagnostics(harness)]


def lint_agents_dir(directory: Path) -> list[Finding]:
    """Agent definitions ``directory/*.md`` lacking the envelope's opening line, sorted by name.

    A file that cannot be read as UTF-8 is reported under the same rule (it cannot carry the
    line either).  Raises ``LintInputError`` when ``directory`` is not a directory.
    """
    if not directory.is_dir():
        raise LintInputError(
            f"agents directory {directory} does not exist; give --agents the directory of "
            f"the agent definitions (*.md, default {DEFAULT_AGENTS_DIR})"
        )
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


def run_lint(
    harness: Sequence[str] | None, agents: str | None, out: TextIO, err: TextIO, root: Path = Path(".")
) -> int:
    """The ``fullsend lint`` command; returns the exit code (0 clean, 1 findings, 2 a bad path or
    nothing to check: a wrong working directory must not pass).

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
    if not files and agents_dir is None:
        err.write(
            f"fullsend lint: nothing to check under {root.resolve()}: no harness file in {DEFAULT_HARNESS_DIR}/ "
            f"(*.yaml, *.yml) and no {DEFAULT_AGENTS_DIR}/ directory; run it from the repository root, "
            "or name the files with --harness FILE and --agents DIR\n"
        )
        return ExitCode.BAD_INPUT
    for finding in findings:
        out.write(finding.line() + "\n")
    checked = f"{len(files)} harness file(s)" + (f" and the agent definitions in {agents_dir}" if agents_dir else "")
    err.write(f"fullsend lint: {len(findings)} finding(s) in {checked}\n")
    return ExitCode.FAILED if findings else ExitCode.OK
