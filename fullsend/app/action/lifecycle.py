"""The action's lifecycle, top to bottom (docs/architecture.md "Action lifecycle").

tokens → pre-flight skips → pre-script → agent iterations with a watcher → post-script →
receipt → outputs and step summary.  Exit codes: docs/architecture.md "Exit codes".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from fullsend.adapters.agentcli.lock import install_root
from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console, console_log
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.cancel import Cancellation, RunCancelled
from fullsend.app.action.confinement.deployment import SHIPPED, Deployment
from fullsend.app.action.finish import RunOutcome, conclude, item_url, quoted_lines, skip_outcome
from fullsend.app.action.outputs import ActionOutcome, status_word
from fullsend.app.action.plan import RunPlan, build_plan
from fullsend.app.action.skip.facts import PreflightFacts, preflight_facts
from fullsend.app.action.skip.preflight import run_preflight
from fullsend.app.action.skip.receipt import receipt_allowed, record_receipt
from fullsend.app.action.tokens import (
    Tokens,
    acquire_role_token,
    capture_job_token,
    receipt_signer,
    restricted_tokens,
)
from fullsend.app.timeline import Timeline
from fullsend.context import load_context
from fullsend.core.final_word import denial_lines
from fullsend.core.report.figures import RunFigures
from fullsend.errors import AgentCliError, ExitCode, MintError
from fullsend.harness import harness_diagnostics
from fullsend.ports import Clock, Log
from fullsend.settings import load_inputs

if TYPE_CHECKING:  # imported for real only once the pre-flight said "go on" (see _work)
    from fullsend.app.action.agent.work import ActionRun
    from fullsend.app.action.confinement.handoff import Handoff
    from fullsend.app.action.skip.fastskip import FastResult
    from fullsend.app.action.status.status import StatusComment


@dataclass
class _Progress:
    """How far a run got: what the cancel path finds set (``None``: that step was not reached)."""

    plan: RunPlan
    timeline: Timeline
    clock: Clock
    log: Log
    cancel: Cancellation
    tokens: Tokens | None = None
    forge: GitHubForge | None = None
    status: StatusComment | None = None
    run: ActionRun | None = None
    restricted: bool = False  # a fork pull request or a Dependabot run (no status comment, no receipt)
    fast: FastResult | None = None  # the fast skip's forge, its pre-flight done or stopped by a signal
    handoff: Handoff | None = None  # set in the agent stage (docs/architecture.md "Agent stage")
    deployment: Deployment = SHIPPED  # chosen at the composition root (confinement/deployment.py)


def run_action(
    console: Console,
    environ: Mapping[str, str] | None = None,
    timeline: Timeline | None = None,
    clock: Clock | None = None,
    cancellation: Cancellation | None = None,
    fast: FastResult | None = None,
    handoff: Handoff | None = None,
    deployment: Deployment = SHIPPED,
) -> int:
    """Run the action; returns the exit code.  Raises ``InputError``/``ConfigError`` (exit 2; also an
    unsupported agent CLI).

    ``environ`` defaults to ``os.environ``; ``timeline`` lets ``fullsend demo`` watch live;
    ``clock`` (default ``SystemClock``) is what every wait and retry sleeps through.
    ``cancellation``: an installed ``Cancellation`` (``fullsend run`` installs it first thing);
    without one, SIGTERM/SIGINT handlers are installed here (main thread) and given back at the end.
    ``fast``: what ``fullsend run``'s fast skip left (docs/architecture.md "Fast skip"): its forge,
    which this run goes on with, and whether its pre-flight is done.  ``handoff``: this process
    is the agent stage, which starts where the first process handed off (docs/architecture.md
    "Agent stage").  ``deployment``: how the action is put together (``SHIPPED`` unless a caller
    composed another in code: ``fullsend.app.action.confinement.deployment``).
    """
    env = dict(os.environ if environ is None else environ)
    cancel, clock, timeline = cancellation or Cancellation(), clock or SystemClock(), timeline or Timeline()
    installed = cancellation is None and cancel.install()
    try:
        started_at = clock.now() if handoff is None else handoff.started_at
        job, role_input = capture_job_token(env, console.mask)  # before anything else (docs/architecture.md "Tokens")
        plan = fast.plan if fast is not None else None  # the fast skip built it: the same plan goes on
        plan = plan or build_plan(load_inputs(env), load_context(env), install_root(env))
        log = console_log(console)
        for diag in harness_diagnostics(plan.harness) if handoff is None else ():  # "Harness": the run goes on
            log("warning", f"{diag.field}: {diag.message} [{diag.rule}]")
        for event in handoff.events if handoff is not None else ():
            timeline.add(event.at, event.kind, event.text, event.rule_id, event.run_ids)
        progress = _Progress(plan, timeline, clock, log, cancel, fast=fast, handoff=handoff, deployment=deployment)
        if cancel.requested.is_set() and fast is not None and fast.forge is not None:
            _reach_the_preflight(progress)
        try:
            with cancel.raising():
                outcome = _steps(progress, console, env, (job, role_input), started_at)
        except RunCancelled:
            with cancel.deferred():
                outcome = _cancelled(progress)
        with cancel.deferred():
            duration_s = max(0.0, (clock.now() - started_at).total_seconds())
            return conclude(plan, replace(outcome, duration_s=duration_s), timeline, log)
    finally:
        if installed:
            cancel.uninstall()


def _steps(
    p: _Progress, console: Console, env: Mapping[str, str], captured: tuple[str, str], started_at: datetime
) -> RunOutcome:
    """Mint → pre-flight → start comment → the work → terminal comment → receipt
    (docs/architecture.md "Action lifecycle")."""
    plan, clock, log, timeline = p.plan, p.clock, p.log, p.timeline
    if p.handoff is not None:
        return _stage_steps(p, console, env, captured[1], started_at)
    fast = p.fast
    if fast is not None and fast.preflight_done and fast.tokens and fast.forge and fast.relay:
        p.tokens, p.forge = tokens, forge = fast.tokens, fast.forge  # the fast skip's pre-flight said "go on"
        fast.relay.to(log)  # its lines (the role token's, the pre-flight's), where these steps' would stand
        facts, skip = preflight_facts(plan, tokens), None
    else:
        try:
            p.tokens = tokens = _role_tokens(p, console, env, captured)
        except MintError as exc:
            log("error", str(exc))
            return RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error=str(exc))
        facts = preflight_facts(plan, tokens)
        p.forge = forge = GitHubForge(
            plan.repo, plan.ctx.api_url, plan.ctx.graphql_url, tokens.job, tokens.role, clock, log=log
        )
        skip = run_preflight(forge, facts, log)
    if skip is not None:
        timeline.add(clock.now(), "skip", skip.reason, rule_id=skip.rule_id)
        return skip_outcome(skip)
    return _work(p, console, env, (tokens, forge, facts), started_at)


def _role_tokens(p: _Progress, console: Console, env: Mapping[str, str], captured: tuple[str, str]) -> Tokens:
    """The run's tokens: minted or as given, the swap taken back for a restricted run (which
    sets ``p.restricted``).  Raises ``MintError`` when a configured mint fails."""
    plan = p.plan
    tokens = acquire_role_token(
        job=captured[0],
        role_input=captured[1],
        mint_url=plan.inputs.mint_url,
        role=plan.role,
        repository=plan.repo.full_name,
        oidc_url=plan.ctx.id_token_request_url,
        oidc_bearer=plan.ctx.id_token_request_token,
        clock=p.clock,
        log=p.log,
        mask=console.mask,
    )
    tokens, p.restricted = restricted_tokens(plan, tokens, env.get("GITHUB_ACTOR", ""), p.log)
    return tokens


def _stage_steps(
    p: _Progress, console: Console, env: Mapping[str, str], role_token: str, started_at: datetime
) -> RunOutcome:
    """The agent stage: the first process minted and ran the pre-flight; the work goes on under
    the role token alone, and without one, unsteered (docs/architecture.md "Agent stage")."""
    handoff = p.handoff
    assert handoff is not None
    p.tokens = tokens = Tokens(job="", role=role_token, minted=handoff.minted, expires_at=handoff.expires_at)
    p.restricted = handoff.restricted
    if not role_token and p.plan.steer.steer_enabled:
        fix = (
            "a run without secrets (a fork's pull request, Dependabot) has none; run the action's own image to steer it"
            if handoff.restricted
            else "set role_token or mint_url (a token that may read Actions, "
            "other than github_token), or run the action's own image"
        )
        p.log(
            "warning",
            "Steering is off: the agent shares the action's uid, so the job token was kept from "
            f"this process, and without a role token nothing can read the follow-up runs: {fix}",
        )
        p.plan = replace(p.plan, steer=replace(p.plan.steer, enabled=False))
    plan = p.plan
    p.forge = forge = GitHubForge(plan.repo, plan.ctx.api_url, plan.ctx.graphql_url, "", role_token, p.clock, log=p.log)
    return _work(p, console, env, (tokens, forge, preflight_facts(plan, tokens)), started_at)


def _work(
    p: _Progress,
    console: Console,
    env: Mapping[str, str],
    reached: tuple[Tokens, GitHubForge, PreflightFacts],
    started_at: datetime,
) -> RunOutcome:
    """The run once the pre-flight said "go on": the agent CLI, the start comment, the work, the
    terminal comment, the receipt.

    The agent side (status comments, ``ActionRun``, the runtimes, the sandboxes, the watcher, the
    envelope) is imported here and nowhere on the way to a skip, so the queued run that skips
    never loads it (docs/architecture.md "Action lifecycle").
    """
    from fullsend.app.action.agent.work import ActionRun

    tokens, forge, facts = reached
    from fullsend.app.action.confinement.handoff import handoff_due, start_agent_stage

    if handoff_due(p.plan, tokens, env, p.deployment):
        events = p.timeline.events
        error = start_agent_stage(p.plan, env, tokens, started_at, p.restricted, events, p.log, p.deployment)
        return RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error=error)
    p.run = run = ActionRun(
        p.plan,
        tokens,
        forge,
        p.clock,
        console,
        p.log,
        p.timeline,
        env,
        started_at,
        cancellation=p.cancel,
        withheld_forms=p.handoff.withheld_forms if p.handoff else (),
        deployment=p.deployment,
    )
    p.cancel.on_cancel(run.cancel)
    run.check_isolation()  # an agent that would share our uid: ConfigError (exit 2) unless allowed
    run.children.remove_credentials()  # before the first child (docs/rules.md#credential-removed)
    try:
        return _agent_part(p, run, forge, tokens, facts)
    finally:
        with p.cancel.deferred():  # no child left, the trees handed back (idempotent)
            run.children.close()


def _agent_part(p: _Progress, run: ActionRun, forge: GitHubForge, tokens: Tokens, facts: PreflightFacts) -> RunOutcome:
    """The agent CLI, the start comment, the work, the terminal comment, the receipt."""
    clock, log, restricted = p.clock, p.log, p.restricted
    if not p.plan.agent_cli:  # this image installs the CLI now, never on the way to a skip
        try:
            run.plan = p.plan = run.with_installed_cli(clock)
        except AgentCliError as exc:
            return RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error=str(exc))
    plan = p.plan
    run.check_agent_cli()  # an unsupported CLI: ConfigError (exit 2) before anything is posted or started
    p.status = status = _status_comment(plan, forge, tokens, log, restricted)
    if plan.inputs.status_comment and not tokens.role and not restricted:
        log("info", "No status comment: there is no role token to post it under")
    status.start(clock.now())
    # GitHub's limits on edits run on real time, whatever clock the run was given (replays use a virtual one)
    status.follow(p.timeline, SystemClock(), plan.inputs.status_interval_seconds)
    outcome = run.execute()
    status.finish(
        clock.now(),
        "cancelled" if run.cancelled.is_set() else status_word(outcome.outcome),
        outcome.error,
        outcome.marker,
        figures=_figures(plan, outcome),
        final_lines=quoted_lines(outcome.final_message),
        denied=denial_lines(outcome.denials),
        end_rule=outcome.error_rule,
    )
    if receipt_allowed(
        outcome,
        token_out_of_reach=run.children.reach.ok,
        cancelled=run.cancelled.is_set(),
        skipped=run.skipped,
        restricted=restricted,
    ):
        sign = receipt_signer(plan.ctx.id_token_request_url, plan.ctx.id_token_request_token, clock)
        outcome = record_receipt(
            forge, facts, outcome, item_url(plan), timeline=p.timeline, clock=clock, log=log, sign=sign
        )
        status.receipt_posted(outcome.receipt_url if outcome.receipt_posted else "")
    status.wait_closing_edit(cancelled=run.cancelled.is_set())  # docs/architecture.md "Status comments"
    return outcome


def _figures(plan: RunPlan, outcome: RunOutcome) -> RunFigures | None:
    """What the agent spent, for the terminal status comment; ``None`` when no agent ran."""
    usage = outcome.usage
    if not usage.ran:
        return None
    return RunFigures(
        stage=plan.inputs.stage,
        runtime=plan.inputs.runtime,
        cost_usd=usage.cost_usd,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        model=usage.model,
    )


def _status_comment(plan: RunPlan, forge: GitHubForge, tokens: Tokens, log: Log, restricted: bool) -> StatusComment:
    from fullsend.app.action.status.status import StatusComment

    return StatusComment(
        forge,
        plan.item,
        plan.ctx.run_id_raw,
        plan.inputs.stage,
        plan.ctx.run_url,
        plan.env_head_sha,
        log,
        enabled=plan.inputs.status_comment and bool(tokens.role) and not restricted,
    )


def _cancelled(p: _Progress) -> RunOutcome:
    """The cancel path: the agent and the watcher are already stopped (``ActionRun.cancel``); no
    receipt; the status comment marked cancelled when there is a role token to write it;
    ``outcome=failed``, exit 1."""
    why = f"the run was cancelled ({p.cancel.signal_name})" if p.cancel.signal_name else "the run was cancelled"
    p.log("warning", f"{why[0].upper()}{why[1:]}; no receipt is posted")
    p.timeline.add(p.clock.now(), "notice", why)
    outcome = (
        p.run.cancelled_outcome()
        if p.run is not None
        else RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error="the run was cancelled")
    )
    status = p.status
    if status is None and p.forge is not None and p.tokens is not None:
        status = _status_comment(p.plan, p.forge, p.tokens, p.log, p.restricted)
    if status is not None:
        status.finish(p.clock.now(), "cancelled", outcome.error, None)
        status.wait_closing_edit(cancelled=True)
    return outcome


def _reach_the_preflight(p: _Progress) -> None:
    """A signal landed during the fast skip's pre-flight: take the tokens as the pre-flight had
    them and its forge, so the cancel path marks the status comment cancelled as for any signal
    in the pre-flight (docs/architecture.md "Cancellation").  Nothing is sent here."""
    fast = p.fast
    assert fast is not None and fast.forge is not None
    p.tokens, p.forge = fast.tokens, fast.forge  # never a restricted run: the fast skip leaves those alone
