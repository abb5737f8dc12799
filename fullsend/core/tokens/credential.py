"""Which lines of a git config carry a secret, and how to cut them out (docs/rules.md#credential-removed).

actions/checkout persists its token by default: v4 (and v5) as one ``extraheader`` line of
``.git/config``, v6 as a file of its own under ``RUNNER_TEMP`` that ``.git/config`` includes.
Before the first child, the action removes that credential, out of the agent's reach;
this module is the pure half: given a config's bytes and the spellings of the secrets
(``fullsend.core.tokens.reach.secret_forms``), it says which lines go.  Only ``key = value``
lines are cut; a secret anywhere else (a section header, a line git would reject) cannot be
cut without changing what the rest of the file means, so it stays, and the reach scan then turns
the receipt off (docs/rules.md#token-in-reach).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The checkout's persisted credential was removed before the agent could reach it.
RULE_CREDENTIAL_REMOVED = "credential-removed"


@dataclass(frozen=True)
class ConfigCut:
    """``left``: the config without the cut lines; ``cut``: how many lines went; ``stuck``: how
    many lines hold a secret but are not ``key = value`` lines (they stay)."""

    left: bytes
    cut: int
    stuck: int


def cut_secret_lines(config: bytes, forms: Sequence[bytes]) -> ConfigCut:
    """``config`` without every ``key = value`` line that holds one of ``forms`` (bytes spellings).

    Line ends are kept as they were; a config with no such line comes back unchanged.
    """
    kept: list[bytes] = []
    cut = stuck = 0
    for line in config.splitlines(keepends=True):
        if not any(form in line for form in forms):
            kept.append(line)
        elif _is_key_value(line):
            cut += 1
        else:
            kept.append(line)
            stuck += 1
    return ConfigCut(b"".join(kept), cut, stuck)


def _is_key_value(line: bytes) -> bool:
    text = line.strip()
    if not text or text.startswith((b"[", b"#", b";")):
        return False
    key, equals, _ = text.partition(b"=")
    return bool(equals) and key.strip().replace(b"-", b"").isalnum()
