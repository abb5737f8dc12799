"""The queued run's pre-flight before the application is loaded: a mode of the forge
(docs/architecture.md "Fast skip").

``fullsend run`` asks :func:`fast_skip` first, right after the re-execution.  It reads every input
plainly (``fullsend.app.action.plaininputs``, against the one table of choices and bounds) and,
when each is plainly valid, builds the real ``GitHubForge`` and runs the real pre-flight on it
(``run_preflight``: the receipt check, then the head-reviewed check, their reads sent at once),
before pydantic, pydantic-settings, jinja2 and the agent side are imported.

* A skip ends the run here, with the log lines, outputs and step summary the lifecycle writes
  (``finish.conclude_item``, the one summary renderer).
* No skip: :attr:`FastResult.forge` hands the forge, with the pre-flight done, to the lifecycle,
  which validates every input, then goes on with the same forge (the logins it resolved, its
  rate-limit memory, its connections) and logs the pre-flight's lines where its own pre-flight
  stood.  Nothing is sent twice and nothing is kept in between but the forge itself.
* An input not plainly valid, a configured mint, a restricted run, anything unforeseen: nothing
  is sent here, and the lifecycle runs from the start (bad input exits 2 before any API call).
* A signal during the reads ends the wait: the lifecycle takes the forge and cancels.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console, console_log
from fullsend.adapters.github.client import Client, at_once
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.facts import PreflightFacts
from fullsend.app.action.plaininputs import plain_inputs
from fullsend.app.action.preflight import run_preflight
from fullsend.context import GitHubContext, api_url_problem, item_from_event, load_context
from fullsend.core.model import Repo
from fullsend.core.receipt.proof.issuer import resolve_issuer
from fullsend.core.restricted import restricted_run
from fullsend.core.tokens.policy import counts_as_minted
from fullsend.input_table import BOOLS


class Relay:
    """A ``Log`` that holds its lines until :meth:`to` names where they go, then forwards."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self._target: Any = None
        self._lock = threading.Lock()

    def __call__(self, level: str, text: str) -> None:
        with self._lock:
            if self._target is None:
                self.lines.append((level, text))
                return
        self._target(level, text)

    def to(self, target: Any) -> None:
        """Write the held lines to ``target`` (a ``Log``), in order, and every later one."""
        with self._lock:
            held, self.lines, self._target = self.lines, [], target
        for level, text in held:
            target(level, text)


@dataclass
class FastResult:
    """``exit_code`` is set when the run skipped (outputs and summary written).  Otherwise, when
    ``forge`` is set, the pre-flight ran on it (``preflight_done``; ``False``: a signal stopped it)
    and ``relay`` holds its lines; without a forge the lifecycle runs from the start."""

    exit_code: int | None = None
    forge: GitHubForge | None = None
    relay: Relay | None = None
    preflight_done: bool = False


class _Undecided(Exception):
    """Leave the run to the lifecycle, from the start."""


def fast_skip(console: Console, environ: Mapping[str, str], cancellation: Cancellation) -> FastResult:
    """Run the pre-flight on the forge before the application is loaded (see the module).  Never
    raises: any doubt leaves the run to the lifecycle (docs/architecture.md "Pre-flight skips")."""
    started_at = SystemClock().now()
    try:
        facts, ctx, repo, warnings = _facts(environ)
    except Exception:  # _Undecided, NotPlain, or anything unforeseen: the full path validates
        return FastResult()
    console.mask(facts.job_token)  # first, as lifecycle does (the full path's masks are no-ops then)
    console.mask(facts.role_token)
    relay = Relay()
    forge = GitHubForge(
        repo,
        ctx.api_url,
        ctx.graphql_url,
        facts.job_token,
        facts.role_token,
        SystemClock(),
        log=relay,
        client=Client(environ),
    )
    wake = threading.Event()
    cancellation.on_cancel(wake.set)
    try:
        [skip] = at_once(lambda: run_preflight(forge, facts, relay), wake=wake)
    except InterruptedError:  # a signal: the lifecycle cancels with this forge
        return FastResult(forge=forge, relay=relay)
    except Exception:  # unforeseen (each check fails open on its own): the lifecycle from the start
        return FastResult()
    if cancellation.requested.is_set():
        return FastResult(forge=forge, relay=relay)
    if skip is None:
        return FastResult(forge=forge, relay=relay, preflight_done=True)
    from fullsend.app.action.finish import conclude_item, skip_outcome  # the summary's jinja2: only for a skip
    from fullsend.app.timeline import Timeline

    log = console_log(console)
    for level, text in warnings:  # the harness's, as the lifecycle logs them before its pre-flight
        log(level, text)
    relay.to(log)
    now = SystemClock().now()
    timeline = Timeline()
    timeline.add(now, "skip", skip.reason, rule_id=skip.rule_id)
    outcome = skip_outcome(skip)
    outcome.duration_s = max(0.0, (now - started_at).total_seconds())
    return FastResult(conclude_item(facts.stage, facts.repository, facts.item_number, ctx, outcome, timeline, log))


# ---- what the check needs, read plainly ----------------------------------------------------------
def _facts(environ: Mapping[str, str]) -> tuple[PreflightFacts, GitHubContext, Repo, list[tuple[str, str]]]:
    """The pre-flight's facts, as ``lifecycle`` builds them, and the harness warnings it logs
    first; ``_Undecided`` (or ``NotPlain``) when any input it reads is not plainly valid, a mint
    is configured, or the run is restricted."""
    ctx = load_context(environ)
    inputs = plain_inputs(environ, ctx.workspace)  # every input, so bad input still makes no API call
    repo = Repo.parse(ctx.repository)
    if not ctx.actions or repo is None or any(api_url_problem(url) for url in (ctx.api_url, ctx.graphql_url)):
        raise _Undecided
    stage = inputs["stage"]
    item = _item(inputs.get("item"), ctx.event)
    job = (environ.get("INPUT_GITHUB_TOKEN") or "").strip()  # as tokens.capture_job_token
    role = (environ.get("INPUT_ROLE_TOKEN") or "").strip()
    if restricted_run(ctx.event_name, ctx.event, repo.full_name, environ.get("GITHUB_ACTOR", "")):
        raise _Undecided
    enabled, warnings = _steering(inputs, ctx.workspace)
    facts = PreflightFacts(
        stage=stage,
        run_id_raw=ctx.run_id_raw,
        run_attempt=ctx.run_attempt_raw,
        repository=repo.full_name,
        item_number=item,
        job_token=job,
        role_token=role,
        minted=counts_as_minted(False, role, job),
        fullsend_dir=str(ctx.workspace / inputs.get("fullsend_dir", ".fullsend")),
        event_name=ctx.event_name,
        event_payload=ctx.event if ctx.event_readable else None,
        review_bot_logins=tuple(p.strip() for p in inputs.get("review_bot_logins", "").split(",") if p.strip()),
        steering_enabled=enabled,
        in_actions=ctx.actions,
        workspace=str(ctx.workspace),
        receipt_issuer=resolve_issuer(inputs.get("receipt_issuer", ""), ctx.server_url),
        workflow_ref=ctx.workflow_ref,
        default_branch=ctx.default_branch,
        allow_unsigned_receipts=BOOLS[inputs.get("allow_unsigned_receipts", "false")],
    )
    return facts, ctx, repo, warnings


def _item(raw: str | None, event: Mapping[str, Any]) -> int:
    item = int(raw) if raw is not None else item_from_event(event)  # plain_inputs checked the digits
    if item <= 0:
        raise _Undecided
    return item


def _steering(inputs: Mapping[str, str], workspace: Path) -> tuple[bool, list[tuple[str, str]]]:
    """The effective ``steer.enabled`` (the input, else the harness's, else on:
    docs/architecture.md "Harness") and the harness's warning lines; ``_Undecided`` for a value
    or a harness in doubt."""
    raw = inputs.get("steer_enabled")
    enabled = BOOLS[raw] if raw is not None else None  # plain_inputs checked the spelling
    numbers = [int(inputs[n]) if n in inputs else None for n in ("max_steers", "poll_interval_seconds")]
    from fullsend.errors import ConfigError
    from fullsend.harness import Harness, harness_diagnostics, load_harness, with_overrides

    harness = Harness()
    if inputs.get("harness"):
        path = (workspace / inputs["harness"]).resolve()
        if not path.is_relative_to(workspace.resolve()):
            raise _Undecided
        try:
            harness = load_harness(path)
        except ConfigError:
            raise _Undecided from None
    if not (inputs.get("prompt") or inputs.get("prompt_file") or harness.prompt):
        raise _Undecided  # no prompt: the full path's exit 2
    try:
        steer = with_overrides(harness.steer, enabled, *numbers)
    except ConfigError:
        raise _Undecided from None
    warnings = [("warning", f"{d.field}: {d.message} [{d.rule}]") for d in harness_diagnostics(harness)]
    return steer.steer_enabled, warnings
