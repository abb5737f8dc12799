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

Standard library only at load time: ``fullsend run`` reads the handoff before it imports the
lifecycle; the first process's side (:func:`handoff_due`, :func:`start_agent_stage`) imports
what it uses when called.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

from fullsend.app.timeline import Event

if TYPE_CHECKING:  # records only: this module imports the standard library at load time
    from fullsend.app.action.confinement.deployment import Deployment
    from fullsend.app.action.plan import RunPlan
    from fullsend.app.action.tokens import Tokens
    from fullsend.ports import Log

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
    #: ``(length, SHA-256 hex)`` of each spelling of the job token, so the stage can mask it in
    #: what it publishes without holding it (:func:`withheld_values`).
    withheld_forms: tuple[tuple[int, str], ...] = ()

    def encode(self) -> str:
        """One JSON document (times in ISO 8601 with their offset)."""
        return json.dumps(
            {
                "started_at": self.started_at.isoformat(),
                "minted": self.minted,
                "expires_at": self.expires_at.isoformat() if self.expires_at else None,
                "restricted": self.restricted,
                "events": [[e.at.isoformat(), e.kind, e.text, e.rule_id, list(e.run_ids)] for e in self.events],
                "withheld_forms": [list(form) for form in self.withheld_forms],
            }
        )


def decode(text: str) -> Handoff:
    """The ``Handoff`` that :meth:`Handoff.encode` wrote.  Raises ``HandoffError`` for anything else."""
    try:
        data = json.loads(text)
        expires = data["expires_at"]
        events = tuple(
            Event(datetime.fromisoformat(at), str(kind), str(what), str(rule), tuple(int(i) for i in ids))
            for at, kind, what, rule, ids in data["events"]
        )
        forms = tuple((int(length), str(digest)) for length, digest in data["withheld_forms"])
        handoff = Handoff(
            datetime.fromisoformat(data["started_at"]),
            data["minted"] is True,
            datetime.fromisoformat(expires) if expires is not None else None,
            data["restricted"] is True,
            events,
            forms,
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise HandoffError(f"the agent stage's handoff is unreadable ({exc.__class__.__name__})") from None
    times = [handoff.started_at, *([handoff.expires_at] if handoff.expires_at else []), *(e.at for e in events)]
    if any(at.tzinfo is None for at in times):
        raise HandoffError("the agent stage's handoff has a time without an offset")
    return handoff


def withheld_forms(job_token: str) -> tuple[tuple[int, str], ...]:
    """``(length, SHA-256 hex)`` of ``job_token`` raw and of its ``encoded_forms``; ``()`` for none."""
    from fullsend.core.tokens.policy import encoded_forms

    forms = (job_token, *encoded_forms(job_token)) if job_token else ()
    return tuple((len(form), hashlib.sha256(form.encode()).hexdigest()) for form in forms)


def withheld_values(texts: Iterable[str], forms: Iterable[tuple[int, str]]) -> list[str]:
    """Every substring of ``texts`` whose length and SHA-256 are one of ``forms``: the job token's
    spellings the stage must mask although it never held them.  Linear in the texts' length per form."""
    found: set[str] = set()
    for length, digest in forms:
        for text in texts:
            for start in range(len(text) - length + 1):
                part = text[start : start + length]
                if part not in found and hashlib.sha256(part.encode()).hexdigest() == digest:
                    found.add(part)
    return sorted(found)


def holds_withheld(job_token: str, environ: Mapping[str, str]) -> bool:
    """Whether this process holds what the agent stage leaves behind: a job token, or a
    non-empty :data:`WITHHELD_KEYS` entry (the OIDC request token mints tokens)."""
    return bool(job_token) or any(environ.get(key) for key in WITHHELD_KEYS)


def take_handoff(secrets: MutableMapping[str, str]) -> Handoff | None:
    """Pop :data:`HANDOFF_KEY` from the entries ``take_secrets`` read: ``None`` in a first process.
    Raises ``HandoffError`` when the entry is there but unreadable."""
    text = secrets.pop(HANDOFF_KEY, None)
    return None if text is None else decode(text)


def stage_secrets(
    environ: Mapping[str, str], process_env: Mapping[str, str], job_token: str, role_token: str, handoff: Handoff
) -> tuple[dict[str, str], dict[str, str]]:
    """The agent stage's environment and memory file, as ``(environment, secrets)``.

    The environment: ``process_env`` (after the first re-exec it holds no secret), less
    :data:`WITHHELD_KEYS` and every entry holding ``job_token`` or the value of one of them.  The
    memory file: every other entry of the run's ``environ`` that the environment lacks (the
    secrets moved at the start), less the same; ``INPUT_ROLE_TOKEN`` set to ``role_token`` (a
    minted token replaces the input), or "" when it holds a withheld value; and the handoff."""
    from fullsend.core.tokens.reach import secret_forms

    withheld = [value for value in (job_token, *(environ.get(key, "") for key in WITHHELD_KEYS)) if value]
    forms = [form for secret in withheld for form in secret_forms(secret)]

    def kept(key: str, value: str) -> bool:  # every spelling the file scan knows, base64 at any offset too
        entry = f"{key}={value}".encode(errors="surrogateescape")
        return key not in WITHHELD_KEYS and key != HANDOFF_KEY and not any(form in entry for form in forms)

    stage_env = {k: v for k, v in process_env.items() if kept(k, v)}
    moved = {k: v for k, v in environ.items() if stage_env.get(k) != v and kept(k, v)}
    # A role token that is (or holds) the job token stays behind too: the stage runs without one.
    moved["INPUT_ROLE_TOKEN"] = role_token if kept("INPUT_ROLE_TOKEN", role_token) else ""
    moved[HANDOFF_KEY] = handoff.encode()
    return stage_env, moved


def hand_off(argv: Sequence[str], stage_env: Mapping[str, str], secrets: Mapping[str, str]) -> NoReturn:
    """Execute the agent stage (interpreter arguments ``argv``: ``Deployment.reexec_argv``) with
    ``stage_env`` and ``secrets`` (:func:`stage_secrets`).  Signals are held from here until the
    stage installs its handlers.  Raises ``OSError``."""
    from fullsend.adapters.secrets import exec_with_secrets
    from fullsend.app.action.cancel import SIGNALS, block_signals

    block_signals()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        exec_with_secrets(argv, stage_env, secrets)
    except OSError:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
        raise


# ---- the first process's side ----------------------------------------------------------------
def handoff_due(plan: RunPlan, tokens: Tokens, env: Mapping[str, str], deployment: Deployment) -> bool:
    """The action's own process, in GitHub Actions, holding a job token that is not the
    deployment's public one (``Deployment.public_token_run``) or a runner credential that mints
    one, about to start children of its own uid as ``allow_shared_uid`` allows
    (docs/architecture.md "Agent stage")."""
    from fullsend.adapters.confinement import capdrop
    from fullsend.app.action.confinement.children import children_share_uid

    return (
        capdrop.applies()
        and plan.ctx.actions
        and plan.inputs.allow_shared_uid
        and holds_withheld(tokens.job, env)
        and not deployment.public_token_run(plan.ctx.api_url, tokens.job)
        and children_share_uid(deployment.child_uid, plan.ctx.workspace)
    )


def start_agent_stage(
    plan: RunPlan,
    env: Mapping[str, str],
    tokens: Tokens,
    started_at: datetime,
    restricted: bool,
    events: Iterable[Event],
    log: Log,
    deployment: Deployment,
) -> str:
    """Remove the checkout's credential while the job token is known, then execute the agent
    stage (``events``: the timeline so far; ``deployment``: the entry it re-executes).  Returns
    only when it could not be started, with the error to fail the run with (no child started).
    Raises ``ConfigError`` (exit 2) when a process above the action holds the job token."""
    from fullsend.app.action.confinement.children import reach_secrets, remove_checkout_credential, scan_roots

    workspace = plan.ctx.workspace
    refuse_an_ancestor_holding(reach_secrets(tokens.job, env))
    remove_checkout_credential(
        env, workspace, scan_roots(env, workspace, env.get("HOME", "")), reach_secrets(tokens.job, env), log
    )
    log("info", "The agent shares the action's uid: the work goes on in a new process that never held the job token")
    handoff = Handoff(
        started_at, tokens.minted, tokens.expires_at, restricted, tuple(events), withheld_forms(tokens.job)
    )
    try:
        hand_off(deployment.reexec_argv(), *stage_secrets(env, os.environ, tokens.job, tokens.role, handoff))
    except OSError as exc:
        return (
            f"the agent stage could not be started ({exc.strerror or exc}), and the agent may not run in a "
            "process that holds the job token; no child was started"
        )


def refuse_an_ancestor_holding(secrets: Mapping[str, str]) -> None:
    """A process above the action whose environment holds the job token (a shell step that runs
    ``fullsend run``) is readable by an agent of the action's uid: ``ConfigError`` (exit 2)
    naming it, before any child (docs/rules.md#token-in-reach)."""
    from fullsend.adapters.confinement.capdrop import KEPT_CAPABILITIES
    from fullsend.adapters.confinement.reach import ancestors_holding
    from fullsend.core.tokens.reach import RULE_TOKEN_IN_REACH
    from fullsend.errors import ConfigError

    root_child = sum(1 << cap for cap in KEPT_CAPABILITIES) if os.geteuid() == 0 else None
    found = ancestors_holding(secrets, reader_caps=root_child)  # what a child of the action's uid could read
    if found:
        pid, command, name = found[0]
        raise ConfigError(
            f"A process above the action (pid {pid}, {command}) holds the {name} in its environment, "
            "where an agent sharing the action's uid could read it: run the action as a container "
            "action (its image runs the agent under a uid of its own), or start fullsend run with "
            f"exec so no process keeps that environment [{RULE_TOKEN_IN_REACH}]"
        )
