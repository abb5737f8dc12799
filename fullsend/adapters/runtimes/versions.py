"""Which CLI versions each runtime supports, and the check before the agent starts.

A CLI outside its runtime's range may speak a protocol the action does not know (a pi older than
``agent_settled`` makes every run hang until its timeout; a newer CLI may end in shapes the
terminal-state tables do not classify).  So before the first agent iteration the action runs
``<agent_cli> --version`` (scrubbed environment, bounded time) and refuses an unsupported or
unreadable version with exit 2 and one ``::error::`` (docs/rules.md ``cli-unsupported``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fullsend.adapters.confinement import proc
from fullsend.adapters.confinement.isolation import ChildUser
from fullsend.core.agent_end import RULE_CLI_UNSUPPORTED
from fullsend.core.cli_versions import CliVersions, Version, version_text
from fullsend.errors import ConfigError, SandboxError

VERSION_TIMEOUT_S = 30.0
_OUTPUT_SHOWN_MAX = 120


def check_cli_version(
    wanted: CliVersions, runtime: str, agent_cli: str, env: Mapping[str, str], cwd: Path, user: ChildUser | None = None
) -> Version:
    """Run ``<agent_cli> --version`` (as ``user`` when given) and return the version when it is one
    ``wanted`` supports.

    ``runtime`` is the runtime's name (for the message).  Raises ``ConfigError`` (exit 2) naming
    the version found (or what the CLI printed), the range supported and how to fix it, when
    the version is outside the range or cannot be read.
    """
    try:
        result = proc.run_command([agent_cli, "--version"], timeout_s=VERSION_TIMEOUT_S, env=env, cwd=cwd, user=user)
        output, failure = result.stdout, f"exit {result.exit_code}" if result.exit_code else ""
    except SandboxError as exc:
        output, failure = "", str(exc)
    found = None if failure else wanted.version_in(output)
    if found is not None and wanted.supports(found):
        return found
    raise ConfigError(_refusal(runtime, agent_cli, wanted, found, failure or _shown(output)))


def _refusal(runtime: str, agent_cli: str, wanted: CliVersions, found: Version | None, seen: str) -> str:
    name = Path(agent_cli).name
    what = (
        f"is {wanted.cli} {version_text(found)}"
        if found is not None
        else f"did not report a {wanted.cli} version ({seen})"
    )
    return (
        f"agent_cli '{name}' {what}, but the {runtime} runtime supports {wanted.cli} {wanted.range_text}; "
        f"point agent_cli at a supported {wanted.cli} (npm install {wanted.package}@"
        f"{version_text(wanted.pinned)}) or use the action's image, which ships it [{RULE_CLI_UNSUPPORTED}]"
    )


def _shown(output: str) -> str:
    text = " ".join(output.split())[:_OUTPUT_SHOWN_MAX]
    return f"its --version printed '{text}'" if text else "its --version printed nothing"
