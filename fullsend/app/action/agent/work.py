"""``ActionRun``: the work part of a run once the pre-flight said "go on".

pre-script (exit 78 skips) → iterations (agent + watcher; validation loop) → post-script, and the
run's outcome.  Whether the agent may share the action's uid is ``confinement``'s; whether the run
steers, ``eligibility``'s.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from fullsend.adapters.gha import FILE_COMMAND_KEYS, Console
from fullsend.adapters.runtimes import RUNTIMES
from fullsend.adapters.runtimes.versions import check_cli_version
from fullsend.adapters.sandbox import sandbox_factory
from fullsend.app.action.agent.agent_env import agent_provider_env, credential_values, runner_secrets
from fullsend.app.action.agent.eligibility import steering_config
from fullsend.app.action.agent.outcome import agent_ok, run_outcome
from fullsend.app.action.agent.scripts import ScriptResult, run_script
from fullsend.app.action.agent.session import IterationResult, IterationSetup, run_facts_env, run_iteration
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.confinement.children import Children, reach_secrets
from fullsend.app.action.confinement.deployment import SHIPPED, Deployment
from fullsend.app.action.confinement.handoff import holds_withheld, withheld_values
from fullsend.app.action.confinement.shared_uid import check_isolation
from fullsend.app.action.finish import AgentUsage, RunOutcome
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.plan import RunPlan
from fullsend.app.action.tokens import Tokens
from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import Carry, WatchConfig, Watcher
from fullsend.core.cli_versions import version_text
from fullsend.core.final_word import ToolDenial, distinct_denials, final_message_value, masked_denial
from fullsend.core.tokens.policy import child_env, encoded_forms
from fullsend.errors import ExitCode
from fullsend.ports import AgentRuntime, Clock, Forge, Log

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
        deployment: Deployment = SHIPPED,
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
            child_uid=deployment.child_uid,
            public_token_run=deployment.public_token_run(environ.get("GITHUB_API_URL", ""), tokens.job),
        )
        self.env.update(run_facts_env(started_at, plan.env_head_sha))
        self.agent_env = agent_provider_env(
            self.env, plan.inputs.runtime, environ, (tokens.job, tokens.role, *secrets), log
        )
        self.known_secrets = known_secrets(tokens, secrets, self.agent_env)
        # The agent stage: the job token's spellings by length and hash, masked where they appear.
        self.withheld_forms = withheld_forms
        self._holds_withheld = holds_withheld(tokens.job, environ)
        self._reach = reach_secrets(tokens.job, environ)  # what no ancestor a child can read may hold
        self.runtime = make_runtime(plan, self.children, log)
        self.sandbox_name = f"fullsend-{plan.ctx.run_id_raw or 'local'}"
        self._start_state(cancellation or Cancellation())

    def _start_state(self, cancellation: Cancellation) -> None:
        """What the run gathers across its iterations, empty at the start."""
        self.denials: list[ToolDenial] = []  # tool calls refused in any iteration
        self.lock = threading.Lock()
        self.cancelled = threading.Event()
        self.cancellation = cancellation
        self._last_result: IterationResult | None = None
        self.earlier: list[IterationResult] = []  # iterations a failed validation replaced (their runs are left over)
        self._watcher: Watcher | None = None
        self.skipped = False
        self.acked_steers = 0  # acknowledged steers across every iteration (output ``steers``)
        self.usage = AgentUsage()  # cost and tokens across every iteration (outputs ``cost_usd`` …)

    # ---- lifecycle ---------------------------------------------------------------------------
    def check_isolation(self) -> None:
        """Refuse an agent that would share the action's uid unless allowed
        (``fullsend.app.action.confinement.shared_uid.check_isolation``); raises ``ConfigError`` (exit 2)."""
        check_isolation(self.children, self.plan, self._holds_withheld, self.log, self._notice, self._reach)

    def _notice(self, text: str, rule_id: str = "") -> None:
        """One ``notice`` row of the timeline, stamped now."""
        self.timeline.add(self.clock.now(), "notice", text, rule_id=rule_id)

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

    def with_installed_cli(self, clock: Clock) -> RunPlan:
        """The plan with the runtime's pinned CLI installed (docs/architecture.md "Agent CLI").

        The installer runs as the child user with the agent's environment less the role token it
        is given as ``GH_TOKEN``/``GITHUB_TOKEN``: no credential at all, the runner's file commands
        hidden.  Raises ``AgentCliError``.
        """
        from fullsend.adapters.agentcli.provide import install_agent_cli

        env = {k: v for k, v in self.env.items() if k not in (*AGENT_HIDDEN_KEYS, "GH_TOKEN", "GITHUB_TOKEN")}
        plan = self.plan
        path = install_agent_cli(plan.inputs.runtime, plan.agent_cli_root, env, clock, self.log, self.children.user)
        return replace(plan, agent_cli=path)

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
                outcome = replace(
                    outcome, outcome=ActionOutcome.FAILED, exit_code=ExitCode.FAILED, error="post-script failed"
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
        watch_cfg = steering_config(
            self.plan, self.tokens, self.runtime, self.forge, self.sandbox_name, self.started_at, self.log, self._notice
        )
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
            if not agent_ok(result) or self.cancelled.is_set() or not self.plan.inputs.validation_script:
                return result, agent_ok(result) and not self.cancelled.is_set()
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
            delegated_wait_s=float(self.plan.inputs.delegated_wait_seconds),
            expected_denials=self.plan.inputs.expected_denials,
        )

    def _register(self, watcher: Watcher | None) -> None:
        self._watcher = watcher
        if watcher is not None and self.cancelled.is_set():
            watcher.stop()

    def _show_output(self, line: str) -> None:
        self.console.untrusted_block([line])

    def _outcome(self, result: IterationResult | None, validated: bool) -> RunOutcome:
        outcome = run_outcome(
            result,
            validated,
            cancelled=self.cancelled.is_set(),
            steers=self.acked_steers,
            env_head_sha=self.plan.env_head_sha,
            earlier=self.earlier,
        )
        secrets = (*self.known_secrets, *self.console.masked)
        if self.withheld_forms and result:
            texts = [result.agent.final_message, *(repr(d) for d in self.denials)]
            secrets = (*secrets, *withheld_values(texts, self.withheld_forms))
        return replace(
            outcome,
            usage=replace(self.usage),
            final_message=final_message_value(result.agent.final_message, secrets) if result else "",
            denials=tuple(masked_denial(d, secrets) for d in distinct_denials(self.denials)),
            agent_isolation="own-uid" if self.children.user is not None else "shared-uid",
        )


def known_secrets(tokens: Tokens, secrets: tuple[str, ...], agent_env: Mapping[str, str]) -> tuple[str, ...]:
    """What is never shown in the final message or a denied tool's input (docs/architecture.md
    "Final message and denied tools"): both tokens in every spelling, the runner's ``secrets`` and
    the agent's provider credentials; the console's masked values join them at the end."""
    return (
        tokens.job,
        tokens.role,
        *encoded_forms(tokens.job),
        *encoded_forms(tokens.role),
        *secrets,
        *credential_values(agent_env),
    )


def make_runtime(plan: RunPlan, children: Children, log: Log) -> AgentRuntime:
    """The ``runtime`` input's runtime, its sandboxes of the ``sandbox`` input run as the
    children's user; its warnings go to ``log``."""
    return RUNTIMES[plan.inputs.runtime](
        warn=lambda m: log("warning", m),
        sandbox_factory=sandbox_factory(plan.inputs.sandbox, openshell_cli=plan.openshell_cli, user=children.user),
    )
