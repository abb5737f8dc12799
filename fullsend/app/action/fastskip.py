"""The queued run's pre-flight before the rest of the application is loaded: a mode of the forge
(docs/architecture.md "Fast skip").

``fullsend run`` asks :func:`fast_skip` first, right after the re-execution.  It takes the steps
the lifecycle takes up to its pre-flight, with the lifecycle's own functions: the tokens
captured and masked, the run plan built (``settings.load_inputs``, the one input table, then
``plan.build_plan``), the role token taken, the real ``GitHubForge`` built and the real pre-flight
run on it (``run_preflight``: the receipt check, then the head-reviewed check, their reads sent
at once).  What only a run that works needs (the lifecycle past its pre-flight, the status
comments, the agent side) is not imported here.

* Bad input raises ``InputError`` / ``ConfigError`` as the lifecycle does (exit 2, one error line
  naming the input and the fix, before any API call): bad input never fast-skips.
* A skip ends the run here, with the log lines, outputs and step summary the lifecycle writes
  (``finish.conclude``, the one summary renderer).
* No skip: :attr:`FastResult.forge` hands the forge, with the pre-flight done, to the lifecycle,
  which goes on with the same plan, tokens and forge (the logins it resolved, its rate-limit
  memory, its connections) and logs the pre-flight's lines where its own pre-flight stood.
  Nothing is sent twice and nothing is kept in between but these.
* A configured mint or a restricted run (their steps come before the pre-flight, with their
  own lines) and anything unforeseen: nothing is sent here, and the lifecycle goes on from the
  plan (or from the start when there is none).
* A signal during the reads ends the wait: the lifecycle takes the forge and cancels.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fullsend.adapters.agentcli.lock import install_root
from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console, console_log
from fullsend.adapters.github.client import Client, at_once
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.facts import preflight_facts
from fullsend.app.action.plan import build_plan
from fullsend.app.action.preflight import run_preflight
from fullsend.app.action.tokens import acquire_role_token, capture_job_token
from fullsend.context import load_context
from fullsend.core.restricted import restricted_run
from fullsend.settings import load_inputs

if TYPE_CHECKING:
    from fullsend.app.action.plan import RunPlan
    from fullsend.app.action.tokens import Tokens
    from fullsend.core.receipt.skips import Skip


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
    """``exit_code`` is set when the run skipped (outputs and summary written).  Otherwise
    ``plan`` is the run plan when it was built, and when ``forge`` is set the pre-flight ran on it
    under ``tokens`` (``preflight_done``; ``False``: a signal stopped it) and ``relay`` holds its
    lines; without a forge the lifecycle takes its own steps from the plan (or the start)."""

    exit_code: int | None = None
    plan: RunPlan | None = None
    tokens: Tokens | None = None
    forge: GitHubForge | None = None
    relay: Relay | None = None
    preflight_done: bool = False


def fast_skip(console: Console, environ: Mapping[str, str], cancellation: Cancellation) -> FastResult:
    """Run the pre-flight on the forge before the rest of the application is loaded (see the
    module).  Raises ``InputError`` / ``ConfigError`` for bad input, before any request, as
    ``lifecycle.run_action`` does; otherwise any doubt leaves the run to the lifecycle
    (docs/architecture.md "Pre-flight skips")."""
    started_at = SystemClock().now()
    job, role_input = capture_job_token(environ, console.mask)  # first, as the lifecycle does
    plan = build_plan(load_inputs(environ), load_context(environ), install_root(environ))
    if (plan.inputs.mint_url and plan.role) or restricted_run(
        plan.ctx.event_name, plan.ctx.event, plan.repo.full_name, environ.get("GITHUB_ACTOR", "")
    ):
        return FastResult(plan=plan)  # the mint, or the restricted run's line, comes first: the lifecycle's
    relay = Relay()
    clock = SystemClock()
    tokens = acquire_role_token(  # the lifecycle's call: with no mint, the role token as given
        job=job,
        role_input=role_input,
        mint_url=plan.inputs.mint_url,
        role=plan.role,
        repository=plan.repo.full_name,
        oidc_url=plan.ctx.id_token_request_url,
        oidc_bearer=plan.ctx.id_token_request_token,
        clock=clock,
        log=relay,
        mask=console.mask,
    )
    forge = GitHubForge(
        plan.repo,
        plan.ctx.api_url,
        plan.ctx.graphql_url,
        tokens.job,
        tokens.role,
        clock,
        log=relay,
        client=Client(environ),
    )
    handed = FastResult(plan=plan, tokens=tokens, forge=forge, relay=relay)
    wake = threading.Event()
    cancellation.on_cancel(wake.set)
    try:
        [skip] = at_once(lambda: run_preflight(forge, preflight_facts(plan, tokens), relay), wake=wake)
    except InterruptedError:  # a signal: the lifecycle cancels with this forge
        return handed
    except Exception:  # unforeseen (each check fails open on its own): the lifecycle's own steps
        return FastResult(plan=plan)
    if cancellation.requested.is_set():
        return handed
    if skip is None:
        handed.preflight_done = True
        return handed
    return FastResult(_conclude_skip(plan, skip, relay, console, started_at))


def _conclude_skip(plan: RunPlan, skip: Skip, relay: Relay, console: Console, started_at: datetime) -> int:
    """Log, write the outputs and the step summary of a skip as the lifecycle does; its exit code."""
    from fullsend.app.action.finish import conclude, skip_outcome  # the summary's jinja2: only for a skip
    from fullsend.app.timeline import Timeline
    from fullsend.harness import harness_diagnostics

    log = console_log(console)
    for diag in harness_diagnostics(plan.harness):  # as the lifecycle logs them before its pre-flight
        log("warning", f"{diag.field}: {diag.message} [{diag.rule}]")
    relay.to(log)
    now = SystemClock().now()
    timeline = Timeline()
    timeline.add(now, "skip", skip.reason, rule_id=skip.rule_id)
    outcome = skip_outcome(skip)
    outcome.duration_s = max(0.0, (now - started_at).total_seconds())
    return conclude(plan, outcome, timeline, log)
