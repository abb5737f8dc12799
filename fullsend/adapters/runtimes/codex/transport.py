"""Which Codex transport a run uses: the live ``app-server`` or ``exec`` interrupt-and-resume
(docs/runtimes.md "Codex transports"; docs/rules.md ``codex-transport``).

The live transport steers with ``turn/steer`` into the running turn; it needs a Codex whose
app-server speaks the protocol the action was tested on (:data:`APP_SERVER_VERSIONS`), and
``agent_args`` that ``codex app-server`` itself accepts (its configuration overrides and feature
switches: the exec-only flags, ``--profile`` or ``--full-auto`` say, would stop it from
starting).  ``codex_transport: auto`` picks the live transport when both hold and says why it
did not otherwise; ``exec`` always interrupts and resumes; ``app-server`` refuses a run that
cannot use it (exit 2).  The choice is a pure function of the three.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fullsend.core.agent_end import RULE_CODEX_TRANSPORT
from fullsend.core.cli_versions import CliVersions, Version, semver_line, version_text
from fullsend.errors import ConfigError

APP_SERVER, EXEC = "app-server", "exec"

#: Codex versions the action runs at all (the real-CLI tests ran exec on 0.152.1 and 0.171.0).
CODEX_VERSIONS = CliVersions(
    "Codex",
    "@openai/codex",
    semver_line(prefix="codex-cli "),
    minimum=(0, 152, 1),
    below=(0, 172, 0),
    pinned=(0, 171, 0),
)
#: Codex versions whose app-server the live transport drives (the real-CLI tests ran on 0.171.0:
#: ``turn/steer`` with ``expectedTurnId``, ``clientUserMessageId`` echoed as the item's ``clientId``).
APP_SERVER_VERSIONS = CliVersions(
    "Codex", "@openai/codex", CODEX_VERSIONS.line, minimum=(0, 171, 0), below=(0, 172, 0), pinned=(0, 171, 0)
)
#: The options of ``codex app-server`` an ``agent_args`` line may use; the flag takes a value
#: when it is listed with True.
APP_SERVER_OPTIONS = {"-c": True, "--config": True, "--enable": True, "--disable": True, "--strict-config": False}


@dataclass(frozen=True)
class TransportChoice:
    """The transport a run uses and the sentence that says why (logged once)."""

    transport: str
    why: str

    @property
    def live(self) -> bool:
        """True for the app-server transport (no interrupt, no restart)."""
        return self.transport == APP_SERVER

    def log_line(self) -> str:
        """``Codex transport: <name> (<how it steers>): <why> [codex-transport]``."""
        how = "turn/steer into the running turn" if self.live else "interrupt and resume"
        return f"Codex transport: {self.transport} ({how}): {self.why} [{RULE_CODEX_TRANSPORT}]"


def foreign_options(agent_args: Sequence[str]) -> list[str]:
    """The options of ``agent_args`` that ``codex app-server`` does not take (``--f=v`` → ``--f``)."""
    foreign, expect_value = [], False
    for arg in agent_args:
        if expect_value:
            expect_value = False
            continue
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if name in APP_SERVER_OPTIONS:
            expect_value = APP_SERVER_OPTIONS[name] and "=" not in arg
        else:
            foreign.append(name)
    return foreign


def choose_transport(preference: str, version: Version, agent_args: Sequence[str] = ()) -> TransportChoice:
    """The transport for ``preference`` (``auto``/``app-server``/``exec``) and a Codex ``version``.

    Raises ``ConfigError`` (exit 2) when ``app-server`` is asked for and cannot run: the version is
    outside :data:`APP_SERVER_VERSIONS`, or ``agent_args`` holds options it does not take.
    """
    found = version_text(version)
    if preference == EXEC:
        return TransportChoice(EXEC, "codex_transport is exec")
    supported = APP_SERVER_VERSIONS.supports(version)
    foreign = foreign_options(agent_args)
    if supported and not foreign:
        return TransportChoice(APP_SERVER, f"Codex {found} has an app-server the action supports")
    if not supported:
        why = f"Codex {found} is outside the app-server range {APP_SERVER_VERSIONS.range_text}"
    else:
        why = f"agent_args names {', '.join(foreign)}, which codex app-server does not take"
    if preference == APP_SERVER:
        raise ConfigError(
            f"codex_transport is app-server, but {why}; set codex_transport to auto or exec, "
            f"or use Codex {APP_SERVER_VERSIONS.range_text} [{RULE_CODEX_TRANSPORT}]"
        )
    return TransportChoice(EXEC, why)
