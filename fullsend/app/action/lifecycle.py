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
from fullsend.adapters.github.lite import LiteAnswer
from fullsend.app.action.cancel import Cancellation, RunCancelled
from fullsend.app.action.facts import PreflightFacts
from fullsend.app.action.finish import RunOutcome, publish, quoted_lines, render_summary
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.plan import RunPlan, build_plan
from fullsend.app.action.preflight import run_preflight
from fullsend.app.action.receipt import receipt_allowed, record_receipt
from fullsend.app.action.tokens import Tokens, acquire_role_token, capture_job_token
from fullsend.app.timeline import Timeline
from fullsend.context import load_context
from fullsend.core.final_word import denial_lines
from fullsend.core.receipt.skips import SKIP_REASON_OUTPUT
from fullsend.core.report.figures import RunFigures
from fullsend.core.restricted import restricted_run
from fullsend.core.tokens.policy import counts_as_minted
from fullsend.errors import AgentCliError, ConfigError, ExitCode, MintError
from fullsend.harness import harness_diagnostics
from fullsend.ports import Clock, Log
from fullsend.settings import load_inputs

if TYPE_CHECKING:  # imported for real only once the pre-flight said "go on" (see _work)
    from fullsend.app.action.handoff import Handoff
    from fullsend.app.action.status import StatusComment
    from fullsend.app.action.work import ActionRun


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
    prefetched: Mapping[str, Mapping[str, LiteAnswer]] | None = None  # the fast skip's answers
    handoff: Handoff | None = None  # set in the agent stage (docs/architecture.md "Agent stage")


def run_action(
    console: Console,
    environ: Mapping[str, str] | None = None,
    timeline: Timeline | None = None,
    clock: Clock | None = None,
    cancellation: Cancellation | None = None,
    prefetched: Mapping[str, Mapping[str, LiteAnswer]] | None = None,
    handoff: Handoff | None = None,
) -> int:
    """Run the action; returns the exit code.  Raises ``InputError``/``ConfigError`` (exit 2; also an
    unsupported agent CLI).

    ``environ`` defaults to ``os.environ``; ``timeline`` lets ``fullsend demo`` watch live;
    ``clock`` (default ``SystemClock``) is what every wait and retry sleeps through.
    ``cancellation``: an installed ``Cancellation`` (``fullsend run`` installs it first thing);
    without one, SIGTERM/SIGINT handlers are installed here (main thread) and given back at the end.
    ``prefetched``: the answers ``fullsend run``'s fast skip already read, per credential
    (docs/architecture.md "Fast skip").  ``handoff``: this process is the agent stage, which
    starts where the first process handed off (docs/architecture.md "Agent stage").
    """
    env = dict(os.environ if environ is None else environ)
    cancel, clock, timeline = cancellation or Cancellation(), clock or SystemClock(), timeline or Timeline()
    installed = cancellation is None and cancel.install()
    try:
        started_at = clock.now() if handoff is None else handoff.started_at
        job, role_input = capture_job_token(env, console.mask)  # before anything else (docs/architecture.md "Tokens")
        plan = build_plan(load_inputs(env), load_context(env), install_root(env))
        log = console_log(console)
        for diag in harness_diagnostics(plan.harness) if handoff is None else ():  # "Harness": the run goes on
            log("warning", f"{diag.field}: {diag.message} [{diag.rule}]")
        for event in handoff.events if handoff is not None else ():
            timeline.add(event.at, event.kind, event.text, event.rule_id, event.run_ids)
        progress = _Progress(plan, timeline, clock, log, cancel, prefetched=prefetched, handoff=handoff)
        if cancel.requested.is_set() and prefetched is not None:
            _reach_the_preflight(progress, env, (job, role_input))
        try:
            with cancel.raising():
                outcome = _steps(progress, console, env, (job, role_input), started_at)
        except RunCancelled:
            with cancel.deferred():
                outcome = _cancelled(progress)
        with cancel.deferred():
            outcome.duration_s = max(0.0, (clock.now() - started_at).total_seconds())
            return _finish(plan, outcome, timeline, log)
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
    try:
        p.tokens = tokens = acquire_role_token(
            job=captured[0],
            role_input=captured[1],
            mint_url=plan.inputs.mint_url,
            role=plan.role,
            repository=plan.repo.full_name,
            oidc_url=plan.ctx.id_token_request_url,
            oidc_bearer=plan.ctx.id_token_request_token,
            clock=clock,
            log=log,
            mask=console.mask,
        )
    except MintError as exc:
        log("error", str(exc))
        return RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error=str(exc))
    tokens, p.restricted = _restricted(plan, tokens, env.get("GITHUB_ACTOR", ""), log)
    p.tokens = tokens
    p.forge = forge = GitHubForge(
        plan.repo, plan.ctx.api_url, plan.ctx.graphql_url, tokens.job, tokens.role, clock, prefetched=p.prefetched
    )
    facts = _preflight_facts(plan, tokens)
    skip = run_preflight(forge, facts, log)
    if skip is not None:
        timeline.add(clock.now(), "skip", skip.reason, rule_id=skip.rule_id)
        return RunOutcome(
            ActionOutcome.SKIPPED,
            ExitCode.OK,
            skip_reason=SKIP_REASON_OUTPUT.get(skip.rule_id, skip.rule_id),
            skip_receipt_url=skip.receipt_url,
            skip_stands_on=skip.stands_on,
        )
    return _work(p, console, env, (tokens, forge, facts), started_at)


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
    p.forge = forge = GitHubForge(plan.repo, plan.ctx.api_url, plan.ctx.graphql_url, "", role_token, p.clock)
    return _work(p, console, env, (tokens, forge, _preflight_facts(plan, tokens)), started_at)


def _handoff_due(p: _Progress, tokens: Tokens, env: Mapping[str, str]) -> bool:
    """The action's own process, in GitHub Actions, holding a job token that is not the
    simulator's or a runner credential that mints one, about to start children of its own uid
    as ``allow_shared_uid`` allows (docs/architecture.md "Agent stage")."""
    from fullsend.adapters import capdrop
    from fullsend.app.action.children import children_share_uid, simulator_seam
    from fullsend.app.action.handoff import holds_withheld

    plan = p.plan
    return (
        capdrop.applies()
        and plan.ctx.actions
        and plan.inputs.allow_shared_uid
        and holds_withheld(tokens.job, env)
        and not simulator_seam(plan.ctx.api_url, tokens.job)
        and children_share_uid(env, plan.ctx.workspace)
    )


def _hand_off(p: _Progress, env: Mapping[str, str], tokens: Tokens, started_at: datetime) -> RunOutcome:
    """Remove the checkout's credential while the job token is known, then execute the agent
    stage.  Returns only when it could not be started: the run fails, no child started."""
    from fullsend.app.action.children import reach_secrets, remove_checkout_credential, scan_roots
    from fullsend.app.action.handoff import Handoff, hand_off, stage_secrets, withheld_forms

    workspace = p.plan.ctx.workspace
    _refuse_an_ancestor_holding(reach_secrets(tokens.job, env))
    remove_checkout_credential(
        env, workspace, scan_roots(env, workspace, env.get("HOME", "")), reach_secrets(tokens.job, env), p.log
    )
    p.log("info", "The agent shares the action's uid: the work goes on in a new process that never held the job token")
    handoff = Handoff(
        started_at, tokens.minted, tokens.expires_at, p.restricted, tuple(p.timeline.events), withheld_forms(tokens.job)
    )
    try:
        hand_off(*stage_secrets(env, os.environ, tokens.job, tokens.role, handoff))
    except OSError as exc:
        error = (
            f"the agent stage could not be started ({exc.strerror or exc}), and the agent may not run in a "
            "process that holds the job token; no child was started"
        )
        return RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error=error)


def _refuse_an_ancestor_holding(secrets: Mapping[str, str]) -> None:
    """A process above the action whose environment holds the job token (a shell step that runs
    ``fullsend run``) is readable by an agent of the action's uid: ``ConfigError`` (exit 2)
    naming it, before any child (docs/rules.md#token-in-reach)."""
    from fullsend.adapters.capdrop import KEPT_CAPABILITIES
    from fullsend.adapters.reach import ancestors_holding
    from fullsend.core.tokens.reach import RULE_TOKEN_IN_REACH

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
    from fullsend.app.action.work import ActionRun

    tokens, forge, facts = reached
    if _handoff_due(p, tokens, env):
        return _hand_off(p, env, tokens, started_at)
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
            run.plan = p.plan = _with_installed_cli(run, clock, log)
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
        _status_of(outcome, run),
        outcome.error,
        outcome.marker,
        figures=_figures(plan, outcome),
        final_lines=quoted_lines(outcome.final_message),
        denied=denial_lines(outcome.denials),
    )
    if receipt_allowed(
        outcome,
        token_out_of_reach=run.children.reach.ok,
        cancelled=run.cancelled.is_set(),
        skipped=run.skipped,
        restricted=restricted,
    ):
        record_receipt(forge, facts, outcome, _item_url(plan), timeline=p.timeline, clock=clock, log=log)
        status.receipt_posted(outcome.receipt_url if outcome.receipt_posted else "")
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
    from fullsend.app.action.status import StatusComment

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
    return outcome


def _reach_the_preflight(p: _Progress, env: Mapping[str, str], captured: tuple[str, str]) -> None:
    """A signal landed during the fast skip's reads, which are this run's pre-flight: take the
    tokens and the forge as the pre-flight would have had them, so the cancel path marks the
    status comment cancelled as for any signal in the pre-flight (docs/architecture.md
    "Cancellation").  Nothing is sent; with a mint configured nothing is taken (no role token yet)."""
    job, role_input = captured
    plan = p.plan
    if plan.inputs.mint_url and plan.role:
        return
    tokens = Tokens(job=job, role=role_input, minted=counts_as_minted(False, role_input, job))
    p.tokens, p.restricted = _restricted(plan, tokens, env.get("GITHUB_ACTOR", ""), lambda _level, _text: None)
    p.forge = GitHubForge(plan.repo, plan.ctx.api_url, plan.ctx.graphql_url, job, role_input, p.clock)


def _restricted(plan: RunPlan, tokens: Tokens, actor: str, log) -> tuple[Tokens, bool]:
    """A fork pull request or a Dependabot run: say once that receipts and the status comment are
    off and why, and take the swap back (no receipt is read or written)."""
    why = restricted_run(plan.ctx.event_name, plan.ctx.event, plan.repo.full_name, actor)
    if not why:
        return tokens, False
    log(
        "info",
        f"Receipts and the status comment are off: this is {why}, which GitHub gives a read-only "
        "job token and no secrets; the work is done all the same",
    )
    return Tokens(job=tokens.job, role=tokens.role, minted=False, expires_at=tokens.expires_at), True


def _with_installed_cli(run: ActionRun, clock: Clock, log: Log) -> RunPlan:
    """The plan with the runtime's pinned CLI installed (docs/architecture.md "Agent CLI").

    The installer runs as the child user with the agent's environment less the role token it is
    given as ``GH_TOKEN``/``GITHUB_TOKEN``: no credential at all, the runner's file commands
    hidden.  Raises ``AgentCliError``.
    """
    from fullsend.adapters.agentcli.provide import install_agent_cli
    from fullsend.app.action.work import AGENT_HIDDEN_KEYS

    env = {k: v for k, v in run.env.items() if k not in (*AGENT_HIDDEN_KEYS, "GH_TOKEN", "GITHUB_TOKEN")}
    path = install_agent_cli(run.plan.inputs.runtime, run.plan.agent_cli_root, env, clock, log, run.children.user)
    return replace(run.plan, agent_cli=path)


def _item_url(plan: RunPlan) -> str:
    return f"{plan.ctx.server_url}/{plan.repo.full_name}/issues/{plan.item}"


def _status_of(outcome: RunOutcome, run: ActionRun) -> str:
    if run.cancelled.is_set():
        return "cancelled"
    return {ActionOutcome.SUCCEEDED: "success", ActionOutcome.SKIPPED: "skipped"}.get(outcome.outcome, "failure")


def _preflight_facts(plan: RunPlan, tokens: Tokens) -> PreflightFacts:
    return PreflightFacts(
        stage=plan.inputs.stage,
        run_id_raw=plan.ctx.run_id_raw,
        run_attempt=plan.ctx.run_attempt_raw,
        repository=plan.repo.full_name,
        item_number=plan.item,
        job_token=tokens.job,
        role_token=tokens.role,
        minted=tokens.minted,
        fullsend_dir=str(plan.ctx.workspace / plan.inputs.fullsend_dir),
        event_name=plan.ctx.event_name,
        event_payload=plan.ctx.event if plan.ctx.event_readable else None,
        review_bot_logins=plan.inputs.review_bot_logins,
        steering_enabled=plan.steer.steer_enabled,
        in_actions=plan.ctx.actions,
        workspace=str(plan.ctx.workspace),
    )


def _finish(plan: RunPlan, outcome: RunOutcome, timeline: Timeline, log: Log) -> int:
    item = f"[{plan.run_name}]({_item_url(plan)})"
    summary = render_summary(outcome, plan.inputs.stage, item, timeline)
    publish(outcome, plan.ctx.output_path, plan.ctx.summary_path, summary, log)
    if outcome.outcome is ActionOutcome.FAILED and outcome.error:
        log("error", f"The run failed: {outcome.error}" + (f" [{outcome.error_rule}]" if outcome.error_rule else ""))
    off = "; steering was off: not running in GitHub Actions" if not plan.ctx.actions else ""
    log("info", f"Outcome: {outcome.outcome}" + (f" ({outcome.skip_reason})" if outcome.skip_reason else "") + off)
    return outcome.exit_code
