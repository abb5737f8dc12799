"""The CLI versions a runtime supports, as data (docs/architecture.md "Runtimes").

``CliVersions`` names one CLI's supported range and the version the image ships; the check that
runs ``<agent_cli> --version`` is ``fullsend.adapters.runtimes.versions.check_cli_version``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: ``(major, minor, patch)`` of a CLI.
Version = tuple[int, int, int]


def version_text(version: Version) -> str:
    """``(2, 1, 332)`` → ``"2.1.332"``."""
    return ".".join(str(part) for part in version)


@dataclass(frozen=True)
class CliVersions:
    """The versions of one CLI a runtime supports: ``minimum`` ≤ version < ``below``.

    ``line`` matches the one line of ``--version`` output that names this CLI's version (group 1
    is ``MAJOR.MINOR.PATCH``); ``pinned`` is the version the action's image ships, which
    ``package`` installs.
    """

    cli: str
    package: str
    line: re.Pattern[str]
    minimum: Version
    below: Version
    pinned: Version

    @property
    def range_text(self) -> str:
        """``">= 2.1.296 and < 2.2.0"``."""
        return f">= {version_text(self.minimum)} and < {version_text(self.below)}"

    def version_in(self, output: str) -> Version | None:
        """The version named by the first line of ``output`` that matches ``line``, or None."""
        for raw in output.splitlines():
            found = self.line.match(raw.strip())
            if found:
                major, minor, patch = (int(part) for part in found.group(1).split("."))
                return major, minor, patch
        return None

    def supports(self, version: Version) -> bool:
        """True when ``minimum`` ≤ ``version`` < ``below``."""
        return self.minimum <= version < self.below


def semver_line(prefix: str = "", suffix: str = "") -> re.Pattern[str]:
    """A ``--version`` line: ``prefix``, ``MAJOR.MINOR.PATCH`` (group 1, optional pre-release), ``suffix``."""
    return re.compile(rf"{prefix}(\d+\.\d+\.\d+)(?:[-+][0-9A-Za-z.-]*)?{suffix}$")
