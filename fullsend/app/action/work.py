"""``ActionRun``: the work part of a run once the pre-flight said "go on".

pre-script (exit 78 skips) → iterations (agent + watcher; validation loop) → post-script.
Steerable only when the conditions of docs/architecture.md "Harness" hold; a decline is announced
when it is a defect or the harness enabled steering explicitly.
"""

from __future__ import annotations

import os
import pwd
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from fullsend.adapters import capdrop
from fullsend.adapters.gha import FILE_COMMAND_KEYS, Console
from fullsend.adapters.isolation import CHILD_USER
from fullsend.adapters.runtimes import RUNTIMES, AgentRuntime
from fullsend.adapters.runtimes.versions import check_cli_version, version_text
from fullsend.adapters.sandbox import sandbox_factory
from fullsend.app.action.agent_env import agent_provider_env, credential_values, runner_secrets
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.children import Children, reach_secrets, simulator_seam
from fullsend.app.action.finish import AgentUsage, LeftFacts, RunOutcome
from fullsend.app.action.handoff import holds_withheld, withheld_values
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.plan import RunPlan
from fullsend.app.action.scripts import ScriptResult, run_script
from fullsend.app.action.session import IterationResult, IterationSetup, run_facts_env, run_iteration
from fullsend.app.action.tokens import Tokens
from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import Carry, WatchConfig, Watcher
from fullsend.core.agent_end import AgentEnd
from fullsend.core.final_word import ToolDenial, distinct_denials, final_message_value, masked_denial
from fullsend.core.tokens.policy import child_env, encoded_forms
from fullsend.core.watch import settle
from fullsend.errors import ConfigError, ExitCode, ForgeError
from fullsend.ports import Clock, Forge, Log

SCRIPT_TIMEOUT_S = 30 * 60
# Runner file commands no child may reach: writing them would set the action's outputs, env or
# summary behind the runner's back (the stop-commands wrapping covers only stdout).  Their
# variables are dropped; the files themselves are guarded by ``Children``.
AGENT_HIDDEN_KEYS = FILE_COMMAND_KEYS


class ActionRun:
    """One run of the action after the pre-flight.  ``execute()`` returns a ``RunOutcome``."""

    def __init__(
        self,
        plan: RunPlan,
        tokens: Tokens,
        forge: Forge,
        clock: Clock,
        console: Console,
        log: Log,
        timeline: Timeline,
        environ: Mapping[str, str],
        started_at: datetime,
        cancellation: Cancellation | None = None,
        withheld_forms: tuple[tuple[int, str], ...] = (),
    ) -> None:
        self.plan, self.tokens, self.forge, self.clock = plan, tokens, forge, clock
        self.console, self.log, self.timeline, self.started_at = console, log, timeline, started_at
        secrets = runner_secrets(environ)
        self.env = child_env(
            {k: v for k, v in environ.items() if not k.upper().startswith("INPUT_") and k not in AGENT_HIDDEN_KEYS},
            tokens.job,
            tokens.role,
            (*encoded_forms(tokens.job), *secrets),
        )
        self.children = Children(
            environ,
            plan.ctx.workspace,
            self.env.get("HOME", ""),
            log,
            secrets=reach_secrets(tokens.job, environ),
            seam=simulator_seam(environ.get("GITHUB_API_URL", ""), tokens.job),
        )
        self.env.update(run_facts_env(started_at, plan.env_head_sha))
        self.agent_env = agent_provider_env(
            self.env, plan.inputs.runtime, environ, (tokens.job, tokens.role, *secrets), log
        )
        # Never shown in the final message or a denied tool's input (docs/architecture.md
        # "Final message and denied tools"); the console's masked values join them at the end.
        self.known_secrets = (
            tokens.job,
            tokens.role,
            *encoded_forms(tokens.job),
            *encoded_forms(tokens.role),
            *secrets,
            *credential_values(self.agent_env),
        )
        # The agent stage: the job token's spellings by length and hash, masked where they appear.
        self.withheld_forms = withheld_forms
        self._holds_withheld = holds_withheld(tokens.job, environ)
        self.denials: list[ToolDenial] = []  # tool calls refused in any iteration
        self.lock = threading.Lock()
        self.cancelled = threading.Event()
        self.cancellation = cancellation or Cancellation()
        self._last_result: IterationResult | None = None
        self.earlier: list[IterationResult] = []  # iterations a failed validation replaced (their runs are left over)
        self.runtime: AgentRuntime = RUNTIMES[plan.inputs.runtime](
            warn=lambda m: log("warning", m),
            sandbox_factory=sandbox_factory(
                plan.inputs.sandbox, openshell_cli=plan.openshell_cli, user=self.children.user
            ),
        )
        self.sandbox_name = f"fullsend-{plan.ctx.run_id_raw or 'local'}"
        self._watcher: Watcher | None = None
        self.skipped = False
        self.acked_steers = 0  # acknowledged steers across every iteration (output ``steers``)
        self.usage = AgentUsage()  # cost and tokens across every iteration (outputs ``cost_usd`` …)

    # ---- lifecycle ---------------------------------------------------------------------------
    def check_isolation(self) -> None:
        """Refuse, in GitHub Actions, an agent that would share the action's uid unless the input
        ``allow_shared_uid`` allows it (docs/adopting.md "Which deployments give receipts"); the
        simulator seam and runs by hand pass.  Raises ``ConfigError`` (exit 2) before any child."""
        children = self.children
        if children.user is None and capdrop.applies():
            self._limit_capabilities()
        if children.user is not None or children.seam or not self.plan.ctx.actions:
            return
        if self.plan.inputs.allow_shared_uid and capdrop.applies() and self._holds_withheld:
            raise ConfigError(
                "The agent would share the action's uid in a process that holds the job token or "
                "the OIDC request token (the hand-off to the agent stage was not made: per-uid "
                "isolation looked available a moment before); run the job again"
            )
        if self.plan.inputs.allow_shared_uid:
            self.log(
                "warning",
                "allow_shared_uid is set: the agent runs under the action's own uid, so it can "
                "rewrite this step's outputs and summary, and no receipt is posted",
            )
            self.timeline.add(
                self.clock.now(),
                "notice",
                "the agent ran under the action's own uid "
                "(allow_shared_uid): it could write this summary and the step's outputs",
            )
            return
        raise ConfigError(
            f"The agent would run under the action's own user ({_user_name()}): {children.isolation_why}. Run "
            f"the action's own image as root (GitHub runs container actions as root; the image creates the user "
            f"{CHILD_USER}), or set allow_shared_uid: true to run it anyway, without receipts"
        )

    def _limit_capabilities(self) -> None:
        """No child user: every later child gets no new privileges and, as root, at most the
        capabilities for file work (docs/architecture.md "Child isolation").  Raises
        ``ConfigError`` when one that would give the agent the action's memory stays."""
        unsealed = capdrop.seal_kernel_settings()
        if unsealed:
            raise ConfigError(
                f"The agent would run as root with the kernel's settings writable ({capdrop.CORE_PATTERN}"
                f": {unsealed}), so it could make the kernel run a program of its own as full root. "
                "Mount /proc/sys read-only (an unprivileged container does), or run the action's own "
                f"image, which runs the agent as {CHILD_USER}"
            )
        left = capdrop.limit_children_capabilities()
        if left == ["unknown"]:
            raise ConfigError(
                "The agent would share the action's uid, and the action could not limit the "
                "capabilities its children get (the kernel refused or would not say): run the "
                f"action's own image, which runs the agent as {CHILD_USER}"
            )
        if left:
            caps = ", ".join("CAP_" + name.upper() for name in left)
            raise ConfigError(
                f"The agent would run as root with {caps}, which would let it read the job token "
                "from the action's memory, and the action could not drop it (it lacks CAP_SETPCAP). "
                "Drop it from the job's container (for example --cap-drop), or run the action's own "
                f"image, which runs the agent as {CHILD_USER}"
            )
        kept = ", ".join("CAP_" + name.upper() for name in capdrop.KEPT_CAPABILITIES.values())
        self.log(
            "info",
            "The agent and the scripts start with no_new_privs"
            + (f" and, as root, at most {kept}" if os.geteuid() == 0 else ""),
        )

    def check_agent_cli(self) -> None:
        """Refuse an agent CLI whose ``--version`` its runtime does not support.

        Raises ``ConfigError`` (exit 2, before the agent starts).  The command runs as the agent
        would: its scrubbed environment, the child user (from ``/``, before the workspace is
        handed over).
        """
        wanted = self.runtime.cli_versions
        found = check_cli_version(
            wanted, self.plan.inputs.runtime, self.plan.agent_cli, self.env, Path("/"), user=self.children.user
        )
        self.log("info", f"Agent CLI: {wanted.cli} {version_text(found)} (supported {wanted.range_text})")
        # Codex: the live app-server or exec (docs/runtimes.md "Codex transports"); the others have one.
        line = self.runtime.transport_line(self.plan.inputs.codex_transport, found, self.plan.inputs.agent_args)
        if line:
            self.log("info", line)

    def execute(self) -> RunOutcome:
        """pre-script → iterations → post-script, the children fenced in (``Children``); never
        raises for agent or script failures (``RunCancelled`` passes through)."""
        self.children.open()
        try:
            return self._work()
        finally:
            with self.cancellation.deferred():  # the trees go back whole, even on a second signal
                self.children.close()

    def _work(self) -> RunOutcome:
        pre = self._pre_script()
        if pre is not None:
            return pre
        result, validated = self._iterations()
        outcome = self._outcome(result, validated)
        if outcome.outcome is ActionOutcome.SUCCEEDED and self.plan.post_script:
            post = self._script(self.plan.post_script)
            if post.exit_code != 0:
                self.log("error", f"The post-script failed with exit code {post.exit_code}")
                outcome.outcome, outcome.exit_code, outcome.error = (
                    ActionOutcome.FAILED,
                    ExitCode.FAILED,
                    "post-script failed",
                )
        return outcome

    def cancel(self) -> None:
        """SIGTERM/SIGINT: stop the watcher (it settles) and the agent's whole process group."""
        self.cancelled.set()
        if self._watcher is not None:
            self._watcher.stop()
        try:
            self.runtime.cancel(self.sandbox_name)
        except Exception:  # cancellation must not raise from a signal handler
            pass

    def cancelled_outcome(self) -> RunOutcome:
        """The outcome of a cancelled run: ``failed``, exit 1, with the steers acknowledged so far."""
        self.cancelled.set()
        return self._outcome(self._last_result, False)

    # ---- parts ---------------------------------------------------------------------------------
    def _pre_script(self) -> RunOutcome | None:
        if not self.plan.pre_script:
            return None
        res = self._script(self.plan.pre_script)
        if res.exit_code == ExitCode.PRE_SCRIPT_SKIP:
            self.skipped = True
            self.log("info", "The pre-script exited 78: skipping the run [pre-script]")
            self.timeline.add(self.clock.now(), "skip", "the pre-script asked to skip the run", rule_id="pre-script")
            return RunOutcome(ActionOutcome.SKIPPED, ExitCode.OK, skip_reason="pre-script")
        if res.exit_code != 0:
            self.log("error", f"The pre-script failed with exit code {res.exit_code}")
            return RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, error="pre-script failed")
        return None

    def _script(self, command: str) -> ScriptResult:
        return run_script(command, self.env, self.plan.ctx.workspace, SCRIPT_TIMEOUT_S, self.children.user)

    def _iterations(self) -> tuple[IterationResult | None, bool]:
        carry, prompt, result = Carry(), self.plan.prompt, None
        watch_cfg = self._watch_config()
        for iteration in range(1, self.plan.inputs.max_iterations + 1):
            if self.cancelled.is_set():
                break
            setup = self._setup(prompt, watch_cfg)
            with self.cancellation.deferred():  # a signal stops the agent and the watcher (cancel)
                result = run_iteration(
                    self.runtime,
                    self.forge,
                    setup,
                    carry,
                    self.clock,
                    self.lock,
                    self.log,
                    self.timeline,
                    self._show_output,
                    self._register,
                )
                self._last_result = result
                self.acked_steers += len(result.agent.steers)
                self.usage.add(result.agent, self.plan.inputs.model)
                self.denials.extend(result.agent.denials)
            if not _agent_ok(result) or self.cancelled.is_set() or not self.plan.inputs.validation_script:
                return result, _agent_ok(result) and not self.cancelled.is_set()
            check = self._script(self.plan.inputs.validation_script)
            if check.exit_code == 0:
                return result, True
            self.log("warning", f"Validation failed after iteration {iteration} (exit {check.exit_code})")
            self.earlier.append(result)
            prompt = f"{self.plan.prompt}\n\nThe validation script failed; its output:\n{check.output}"
        return result, False

    def _setup(self, prompt: str, watch_cfg: WatchConfig | None) -> IterationSetup:
        return IterationSetup(
            sandbox_name=self.sandbox_name,
            agent_cli=self.plan.agent_cli,
            prompt=prompt,
            workdir=self.plan.ctx.workspace,
            env=self.agent_env,
            timeout_s=self.plan.timeout_s,
            model=self.plan.inputs.model,
            fallback_models=self.plan.inputs.fallback_models,
            watch=watch_cfg,
            cancelled=self.cancelled,
            extra_args=self.plan.inputs.agent_args,
        )

    def _register(self, watcher: Watcher | None) -> None:
        self._watcher = watcher
        if watcher is not None and self.cancelled.is_set():
            watcher.stop()

    def _show_output(self, line: str) -> None:
        self.console.untrusted_block([line])

    def _outcome(self, result: IterationResult | None, validated: bool) -> RunOutcome:
        outcome = self._bare_outcome(result, validated)
        outcome.usage = self.usage
        secrets = (*self.known_secrets, *self.console.masked)
        if self.withheld_forms and result:
            texts = [result.agent.final_message, *(repr(d) for d in self.denials)]
            secrets = (*secrets, *withheld_values(texts, self.withheld_forms))
        outcome.final_message = final_message_value(result.agent.final_message, secrets) if result else ""
        outcome.denials = tuple(masked_denial(d, secrets) for d in distinct_denials(self.denials))
        outcome.agent_isolation = "own-uid" if self.children.user is not None else "shared-uid"
        return outcome

    def _bare_outcome(self, result: IterationResult | None, validated: bool) -> RunOutcome:
        steers = self.acked_steers
        head = (result.marker.head if result and result.marker.head else self.plan.env_head_sha) if result else ""
        left = _left_facts([*(r for r in self.earlier if r is not result), *([result] if result else [])])
        end = result.agent.end if result else None
        if self.cancelled.is_set():
            return RunOutcome(
                ActionOutcome.FAILED,
                ExitCode.FAILED,
                steers=steers,
                head_sha=head,
                error="the run was cancelled",
                left=left,
                agent_end=end,
            )
        if result is None or not validated:
            error = (result.agent.error if result else "") or "the agent run failed"
            rule = end.value if end is not None and end is not AgentEnd.SUCCESS else ""
            if result and result.session_lost:
                error = "the agent session was lost during a steer interrupt; the queued run will redo the update"
            return RunOutcome(
                ActionOutcome.FAILED,
                ExitCode.FAILED,
                steers=steers,
                head_sha=head,
                error=error,
                left=left,
                settle_reason=result.settle_reason if result else "",
                agent_end=end,
                error_rule=rule,
            )
        return RunOutcome(
            ActionOutcome.SUCCEEDED,
            ExitCode.OK,
            steers=steers,
            marker=result.marker,
            head_sha=head,
            settle_reason=result.settle_reason,
            left=left,
            agent_end=end,
        )

    # ---- steering eligibility (docs/architecture.md "Harness") ------------------------------
    def _watch_config(self) -> WatchConfig | None:
        steer = self.plan.steer
        if not steer.steer_enabled:
            return None
        reason, defect = self._decline_reason()
        if reason:
            if defect or steer.explicitly_enabled:
                self.log("warning", f"Steering disabled: {reason} [steering-disabled]")
                self.timeline.add(
                    self.clock.now(), "notice", f"steering disabled: {reason}", rule_id="steering-disabled"
                )
            elif not self.plan.ctx.actions:
                self.log("info", f"Steering is off: {NOT_IN_ACTIONS_WHY} [steering-disabled]")
                self.timeline.add(
                    self.clock.now(),
                    "notice",
                    "steering is off: not running in GitHub Actions",
                    rule_id="steering-disabled",
                )
            return None
        logins = self._self_logins()
        if logins is None:
            return None
        deadline = settle.watch_deadline(self.started_at, self.plan.inputs.timeout_minutes, self.tokens.expires_at)
        return WatchConfig(
            run_id=self.plan.ctx.run_id,
            run_name=self.plan.run_name,
            item_number=self.plan.item,
            self_logins=logins,
            started_at=self.started_at,
            deadline=deadline,
            max_steers=steer.effective_max_steers,
            min_remaining=settle.min_remaining_for(
                self.plan.inputs.runtime, interrupts=self.runtime.interrupts_to_steer
            ),
            poll_interval_s=float(steer.effective_poll_interval_s),
            env_head_sha=self.plan.env_head_sha,
            stage_hints=(self.plan.ctx.job, self.plan.inputs.stage),
        )

    def _decline_reason(self) -> tuple[str, bool]:
        if not self.plan.ctx.actions:
            return NOT_IN_ACTIONS, False
        if not (self.tokens.job or self.tokens.role):  # the agent stage reads under the role token
            return "no token to read the Actions API with", True
        if self.plan.ctx.run_id <= 0:
            return "GITHUB_RUN_ID is not set", True
        probe = self._setup(self.plan.prompt, None)
        from fullsend.ports import AgentParams

        reason = self.runtime.steer_decline_reason(
            AgentParams(
                sandbox_name=probe.sandbox_name,
                agent_cli=probe.agent_cli,
                prompt="",
                workdir=probe.workdir,
                env={},
                steerable=True,
                timeout_s=probe.timeout_s,
                model=probe.model,
                fallback_models=probe.fallback_models,
            )
        )
        return (reason, True) if reason else ("", False)

    def _self_logins(self) -> frozenset[str] | None:
        try:
            role_login = self.forge.viewer_login("role")
        except ForgeError as exc:
            self.log(
                "warning",
                "Steering disabled: this run cannot resolve the login its own output is posted "
                f"under ({exc}) [steering-disabled]",
            )
            return None
        return frozenset({role_login, *self.plan.inputs.self_logins, *self.plan.review_bot_logins})


#: Why a run outside GitHub Actions does not steer (logged once, at info level).
NOT_IN_ACTIONS = "not running in GitHub Actions"
NOT_IN_ACTIONS_WHY = (
    "not running in GitHub Actions (GITHUB_ACTIONS is not 'true'), so there is no run of the shim to "
    "watch and no follow-up run whose provenance could be proven; the agent runs once on its prompt"
)


def _user_name() -> str:
    """The action's effective user, by name when ``/etc/passwd`` has it, else ``uid <n>``."""
    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name}, uid {uid}"
    except KeyError:
        return f"uid {uid}"


def _left_facts(results: list[IterationResult]) -> LeftFacts:
    """What every iteration left: only the shipped (last) one's acknowledged runs can be receipted."""
    return LeftFacts(
        tuple(pair for r in results for pair in r.left),
        tuple(run_id for r in results for batch in r.delivered for run_id in batch.run_ids),
        tuple(run_id for r in results for run_id in r.marker.consumed),
    )


def _agent_ok(result: IterationResult) -> bool:
    """Outright success only: exit 0, no error, not cut short, session kept, end ``SUCCESS``."""
    agent = result.agent
    return (
        agent.exit_code == 0
        and not agent.is_error
        and not agent.timed_out
        and not result.session_lost
        and agent.end is AgentEnd.SUCCESS
    )
