"""The agent stage: without a child user, the work goes on in a process that never held the job token.

A child that shares the action's uid can change the action's own files (always when the action
is root), and a module or template the action loads after the agent started then runs inside
the action.  So when the children would share its uid, the action — once the mint and the
pre-flight are done, before its first child — executes itself anew (docs/architecture.md "Agent
stage"): the new image gets the role token and the few facts below through a memory file, and
neither the job token, nor the runner's OIDC request token, nor any entry that holds the job
token.  Whatever code a child gets into that image finds no credential the receipt reader
trusts.  The stage's Actions reads go through the role token; receipts are off there anyway
(docs/rules.md#token-in-reach).

Standard library only: ``fullsend run`` reads the handoff before it imports the lifecycle.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NoReturn

from fullsend.app.action.timeline import Event

#: The memory file's entry that carries the handoff (never read from the environment).
HANDOFF_KEY = "FULLSEND_HANDOFF"
#: What never crosses into the agent stage: the job token and what mints or replaces it.
WITHHELD_KEYS = frozenset({"INPUT_GITHUB_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_RUNTIME_TOKEN"})


class HandoffError(Exception):
    """The handoff's memory file holds something this version did not write."""


@dataclass(frozen=True)
class Handoff:
    """What the first process knew that the agent stage keeps: when the run started, whether the
    role token came from a real swap (and until when it lives), whether the run is restricted
    (fork or Dependabot), and the timeline so far."""

    started_at: datetime
    minted: bool
    expires_at: datetime | None
    restricted: bool
    events: tuple[Event, ...] = ()

    def encode(self) -> str:
        """One JSON document (times in ISO 8601 with their offset)."""
        return json.dumps({
            "started_at": self.started_at.isoformat(), "minted": self.minted,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None, "restricted": self.restricted,
            "events": [[e.at.isoformat(), e.kind, e.text, e.rule_id, list(e.run_ids)] for e in self.events]})


def decode(text: str) -> Handoff:
    """The ``Handoff`` that :meth:`Handoff.encode` wrote.  Raises ``HandoffError`` for anything else."""
    try:
        data = json.loads(text)
        expires = data["expires_at"]
        events = tuple(Event(datetime.fromisoformat(at), str(kind), str(what), str(rule), tuple(int(i) for i in ids))
                       for at, kind, what, rule, ids in data["events"])
        handoff = Handoff(datetime.fromisoformat(data["started_at"]), data["minted"] is True,
                          datetime.fromisoformat(expires) if expires is not None else None,
                          data["restricted"] is True, events)
    except (ValueError, TypeError, KeyError) as exc:
        raise HandoffError(f"the agent stage's handoff is unreadable ({exc.__class__.__name__})") from None
    if handoff.started_at.tzinfo is None:
        raise HandoffError("the agent stage's handoff has a start time without an offset")
    return handoff


def take_handoff(secrets: MutableMapping[str, str]) -> Handoff | None:
    """Pop :data:`HANDOFF_KEY` from the entries ``take_secrets`` read: ``None`` in a first process.
    Raises ``HandoffError`` when the entry is there but unreadable."""
    text = secrets.pop(HANDOFF_KEY, None)
    return None if text is None else decode(text)


def bootstrap_argv() -> list[str]:
    """The interpreter arguments that run ``fullsend run`` from this package, wherever it lies."""
    package_parent = str(Path(__file__).resolve().parents[3])
    return ["-c", f"import sys; sys.path.insert(0, {package_parent!r}); from fullsend.__main__ import main; "
                  "sys.exit(main(['run']))"]


def stage_secrets(environ: Mapping[str, str], process_env: Mapping[str, str], job_token: str, role_token: str,
                  handoff: Handoff) -> tuple[dict[str, str], dict[str, str]]:
    """The agent stage's environment and memory file, as ``(environment, secrets)``.

    The environment: ``process_env`` (after the first re-exec it holds no secret), less
    :data:`WITHHELD_KEYS` and every entry holding ``job_token``.  The memory file: every other
    entry of the run's ``environ`` that the environment lacks (the secrets moved at the start),
    less the same; ``INPUT_ROLE_TOKEN`` set to ``role_token`` (a minted token replaces the
    input); and the handoff."""
    from fullsend.core.tokens.policy import holds_token

    def kept(key: str, value: str) -> bool:
        return key not in WITHHELD_KEYS and key != HANDOFF_KEY and not holds_token(key, value, job_token)

    stage_env = {k: v for k, v in process_env.items() if kept(k, v)}
    moved = {k: v for k, v in environ.items() if stage_env.get(k) != v and kept(k, v)}
    moved["INPUT_ROLE_TOKEN"] = role_token
    moved[HANDOFF_KEY] = handoff.encode()
    return stage_env, moved


def hand_off(stage_env: Mapping[str, str], secrets: Mapping[str, str]) -> NoReturn:
    """Execute the agent stage with ``stage_env`` and ``secrets`` (:func:`stage_secrets`).
    Signals are held from here until the stage installs its handlers.  Raises ``OSError``."""
    from fullsend.adapters.secrets import exec_with_secrets
    from fullsend.app.action.cancel import SIGNALS, block_signals

    block_signals()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        exec_with_secrets(bootstrap_argv(), stage_env, secrets)
    except OSError:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
        raise
