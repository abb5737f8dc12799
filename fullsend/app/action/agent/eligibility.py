"""Whether a run steers, and the watcher's configuration when it does (docs/architecture.md "Harness").

Steerable only when the conditions of docs/architecture.md "Harness" hold; a decline is announced
(a warning and a ``notice`` row, docs/rules.md#steering-disabled) when it is a defect or the
harness enabled steering explicitly, and once at info level outside GitHub Actions.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from fullsend.app.action.plan import RunPlan
from fullsend.app.action.tokens import Tokens
from fullsend.app.watch.state import WatchConfig
from fullsend.core.watch import settle
from fullsend.errors import ForgeError
from fullsend.ports import AgentParams, AgentRuntime, Forge, Log

#: Why a run outside GitHub Actions does not steer (logged once, at info level).
NOT_IN_ACTIONS = "not running in GitHub Actions"
NOT_IN_ACTIONS_WHY = (
    "not running in GitHub Actions (GITHUB_ACTIONS is not 'true'), so there is no run of the shim to "
    "watch and no follow-up run whose provenance could be proven; the agent runs once on its prompt"
)

#: ``notice(text, rule_id)``: one ``notice`` row of the run's timeline, stamped now.
Notice = Callable[[str, str], None]


def steering_config(
    plan: RunPlan,
    tokens: Tokens,
    runtime: AgentRuntime,
    forge: Forge,
    sandbox_name: str,
    started_at: datetime,
    log: Log,
    notice: Notice,
) -> WatchConfig | None:
    """The watcher's configuration for this run, or ``None`` when it does not steer (steering off,
    declined, or the login its own output is posted under unresolvable).  ``started_at`` is the
    action's start (aware UTC); the deadline is ``settle.watch_deadline``'s.  Never raises
    ``ForgeError`` (a failed login read declines with one warning)."""
    steer = plan.steer
    if not steer.steer_enabled:
        return None
    reason, defect = _decline_reason(plan, tokens, runtime, sandbox_name)
    if reason:
        if defect or steer.explicitly_enabled:
            log("warning", f"Steering disabled: {reason} [steering-disabled]")
            notice(f"steering disabled: {reason}", "steering-disabled")
        elif not plan.ctx.actions:
            log("info", f"Steering is off: {NOT_IN_ACTIONS_WHY} [steering-disabled]")
            notice("steering is off: not running in GitHub Actions", "steering-disabled")
        return None
    logins = _self_logins(plan, forge, log)
    if logins is None:
        return None
    return WatchConfig(
        run_id=plan.ctx.run_id,
        run_name=plan.run_name,
        item_number=plan.item,
        self_logins=logins,
        started_at=started_at,
        deadline=settle.watch_deadline(started_at, plan.inputs.timeout_minutes, tokens.expires_at),
        max_steers=steer.effective_max_steers,
        min_remaining=settle.min_remaining_for(plan.inputs.runtime, interrupts=runtime.interrupts_to_steer),
        poll_interval_s=float(steer.effective_poll_interval_s),
        env_head_sha=plan.env_head_sha,
        stage_hints=(plan.ctx.job, plan.inputs.stage),
    )


def _decline_reason(plan: RunPlan, tokens: Tokens, runtime: AgentRuntime, sandbox_name: str) -> tuple[str, bool]:
    """``(why, is_a_defect)``, or ``("", False)`` when the run may steer."""
    if not plan.ctx.actions:
        return NOT_IN_ACTIONS, False
    if not (tokens.job or tokens.role):  # the agent stage reads under the role token
        return "no token to read the Actions API with", True
    if plan.ctx.run_id <= 0:
        return "GITHUB_RUN_ID is not set", True
    reason = runtime.steer_decline_reason(
        AgentParams(
            sandbox_name=sandbox_name,
            agent_cli=plan.agent_cli,
            prompt="",
            workdir=plan.ctx.workspace,
            env={},
            steerable=True,
            timeout_s=plan.timeout_s,
            model=plan.inputs.model,
            fallback_models=plan.inputs.fallback_models,
        )
    )
    return (reason, True) if reason else ("", False)


def _self_logins(plan: RunPlan, forge: Forge, log: Log) -> frozenset[str] | None:
    """The logins the run's own output is posted under; ``None`` (one warning) when unresolvable."""
    try:
        role_login = forge.viewer_login("role")
    except ForgeError as exc:
        log(
            "warning",
            "Steering disabled: this run cannot resolve the login its own output is posted "
            f"under ({exc}) [steering-disabled]",
        )
        return None
    return frozenset({role_login, *plan.inputs.self_logins, *plan.review_bot_logins})
