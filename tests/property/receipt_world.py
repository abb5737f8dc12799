"""One run of the action, in-process on virtual time, for the receipt's promise (issue 23).

Real parts: the simulator over HTTP on 127.0.0.1, ``GitHubForge``, the ``Watcher`` and its watch
loop on a thread of a :class:`VirtualClock` (docs/architecture.md "Threads and time"), the
iteration's result (``session._result``: ``marker_from`` over what the watcher delivered and the
runtime acknowledged), the run's outcome (``ActionRun._outcome``), the receipt decision and writer (``receipt_allowed``,
``record_receipt``) and the pre-flight of every queued
run (``run_preflight``).  Modelled: the agent — :class:`PromiseAgent` is a runtime's ``Steerer``
whose acknowledgements and end state the test draws — and the ``ActionRun`` around the iteration
(:class:`_RunFacts`: the fields ``_outcome`` and ``receipt_allowed`` read).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fullsend.adapters.github.forge import GitHubForge
from fullsend.adapters.runtimes.verdict import error_text
from fullsend.app.action.agent import session, work
from fullsend.app.action.finish import AgentUsage, RunOutcome
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.preflight import run_preflight
from fullsend.app.action.skip.receipt import receipt_allowed, record_receipt
from fullsend.app.action.tokens import receipt_signer
from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import WatchConfig, Watcher
from fullsend.core.agent_end import AgentEnd
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.receipt.skips import Skip
from fullsend.core.scalars import parse_time
from fullsend.core.tokens.reach import ReachVerdict
from fullsend.core.watch.start import StartRefused
from fullsend.core.watch.steer import SteerMessage, SteerResult
from fullsend.errors import ForgeError, SteerAfterSettle
from fullsend.ports import AgentRunResult
from fullsend.simulator.fixtures import (
    FIX_CREATED_AT,
    FIX_RUN_ID,
    JOB_LOGIN,
    JOB_TOKEN,
    OIDC_REQUEST_TOKEN,
    ROLE_TOKEN,
    shim_workflow_ref,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.virtual_clock import VirtualClock
from tests.property.turn_ends import LOST_ENDS, STREAM_ENDS, TURN_LINES, iteration_end, lost_end, stream_end

ORIGIN = "2026-09-03T10:01:00Z"
WATCH_S = 50 * 60.0
POLL_S = 30.0
TIMEOUT_S = 3  # each request's timeout (whole seconds): what a ``timeout`` fault costs; a loaded
# machine never stalls a loopback answer that long, so no timeout happens unless one is injected
HANG_S = TIMEOUT_S + 0.2  # how long a ``timeout`` fault keeps the answer back

# (exit_code, is_error, timed_out, session_lost, cancelled): how an agent iteration can end.
END_STATES: dict[str, tuple[int, bool, bool, bool, bool]] = {
    "success": (0, False, False, False, False),
    "failure": (1, False, False, False, False),
    "crash": (-9, False, False, False, False),
    "error-result": (0, True, False, False, False),
    "timed-out": (124, False, True, False, False),
    "session-lost": (1, False, False, True, False),
    "cancelled": (143, False, False, False, True),
    "limit-reached": (0, False, False, False, False),  # exit 0, no error flag: the turn limit (issue 16)
    "protocol-broken": (0, False, False, False, False),  # exit 0 with no recognisable end event
}
#: The class each end state's runtime reports (fullsend.core.agent_end.AgentEnd).
END_CLASSES: dict[str, AgentEnd] = {
    "success": AgentEnd.SUCCESS,
    "failure": AgentEnd.AGENT_ERROR,
    "crash": AgentEnd.PROTOCOL_BROKEN,
    "error-result": AgentEnd.AGENT_ERROR,
    "timed-out": AgentEnd.INTERRUPTED,
    "session-lost": AgentEnd.PROTOCOL_BROKEN,
    "cancelled": AgentEnd.INTERRUPTED,
    "limit-reached": AgentEnd.LIMIT_REACHED,
    "protocol-broken": AgentEnd.PROTOCOL_BROKEN,
}


@dataclass
class PromiseAgent:
    """A runtime's ``Steerer`` whose acknowledgements the test draws.

    ``steer`` queues the message (``SteerAfterSettle`` once the session ended); the test then
    acknowledges, folds into the next one, drops or rejects what is pending.  ``acks`` are the
    ``SteerResult``s the runtime would report; ``seen`` every message handed over (what the agent,
    a child process, can read).
    """

    clock: VirtualClock
    pending: list[SteerMessage] = field(default_factory=list)
    seen: list[SteerMessage] = field(default_factory=list)
    acks: list[SteerResult] = field(default_factory=list)
    settled: bool = False
    exited: bool = False

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        if self.exited:
            raise SteerAfterSettle("the session ended")
        self.pending.append(msg)
        self.seen.append(msg)

    def settle(self, sandbox_name: str) -> None:
        self.settled = True

    def ack(self) -> None:
        """Echo the first pending line: it is acknowledged."""
        if self.pending:
            self.acks.append(SteerResult(self.pending.pop(0).follow_up_run_id, self.clock.now()))

    def drop(self) -> None:
        """The first pending line is never echoed (lost, or rejected with ``success:false``)."""
        if self.pending:
            self.pending.pop(0)


@dataclass
class _RunFacts:
    """The fields of ``ActionRun`` that ``_outcome`` and ``receipt_allowed`` read."""

    plan: Any
    cancelled: threading.Event = field(default_factory=threading.Event)
    skipped: bool = False
    acked_steers: int = 0
    usage: AgentUsage = field(default_factory=AgentUsage)
    earlier: list[Any] = field(default_factory=list)  # one iteration: no validation retry
    # The job token proven out of the agent's reach (docs/rules.md#token-in-reach), as in the simulator's deployment.
    children: Any = field(default_factory=lambda: SimpleNamespace(reach=ReachVerdict(True), user=None))
    known_secrets: tuple[str, ...] = ()  # what the final message is masked with (none in this world)
    withheld_forms: tuple[tuple[int, str], ...] = ()  # not an agent stage: nothing masked by hash
    denials: list[Any] = field(default_factory=list)
    console: Any = field(default_factory=lambda: SimpleNamespace(masked=()))  # masks nothing


@dataclass
class FollowUp:
    """A shim run the test added: its id, kind, attempt, and whether the watcher may accept it."""

    run_id: int
    kind: str
    attempt: int
    acceptable: bool
    comment_id: int = 0


FULLSEND_DIR = Path(__file__).parent / "fullsend-dir"  # holds no providers/: no sandbox gets the job token


def facts_for(sim: GitHubSimulator, run_id: int, attempt: int = 1) -> PreflightFacts:
    """The pre-flight facts of run ``run_id`` on PR #7 (the job and role tokens of FIX, minted;
    receipts signed and checked against ``sim``'s issuer, docs/rules.md "Receipt proof")."""
    return PreflightFacts(
        stage="review",
        run_id_raw=str(run_id),
        run_attempt=str(attempt),
        repository="org/repo",
        item_number=7,
        job_token=JOB_TOKEN,
        role_token=ROLE_TOKEN,
        minted=True,
        fullsend_dir=str(FULLSEND_DIR),
        receipt_issuer=sim.issuer.url,
        workflow_ref=shim_workflow_ref(sim),
    )


class World:
    """The simulator, the forge, the watcher on its virtual-clock thread and the agent of one run."""

    def __init__(self) -> None:
        origin = parse_time(ORIGIN)
        assert origin is not None
        self.clock = VirtualClock(origin)
        self.sim = GitHubSimulator(clock=self.clock.now).start()
        standard_pr_scenario(self.sim)
        self.forge = GitHubForge(
            Repo("org", "repo"),
            self.sim.api_url,
            self.sim.graphql_url,
            JOB_TOKEN,
            ROLE_TOKEN,
            self.clock,
            timeout_s=TIMEOUT_S,
        )
        self.logs: list[tuple[str, str]] = []
        self.timeline = Timeline()
        self.agent = PromiseAgent(self.clock)
        self.follow_ups: list[FollowUp] = []
        self.faults = 0
        self.timeouts = 0
        self.comments_changed = 0
        self.head = "aaa111"
        self.watcher = Watcher(
            self.forge, self.agent, "sandbox-1", threading.Lock(), self.clock, self._config(), self.log, self.timeline
        )
        self.thread: threading.Thread | None = None
        try:
            self.watcher.start()
            self.thread = self.clock.spawn(self.watcher.watch, "promise-watcher")
        except (StartRefused, ForgeError):
            self.agent.settled = True
        self.outcome: RunOutcome | None = None
        self.end_state = ""
        self.skips: dict[int, Skip | None] = {}
        #: Comment ids of receipt-shaped comments another workflow posted as the job token's login.
        self.forged: set[int] = set()

    def _config(self) -> WatchConfig:
        started = parse_time(FIX_CREATED_AT)
        assert started is not None
        return WatchConfig(
            run_id=FIX_RUN_ID,
            run_name="org/repo#7",
            item_number=7,
            self_logins=frozenset({"fullsend-ai-review[bot]"}),
            started_at=started,
            deadline=self.clock.now() + timedelta(seconds=WATCH_S),
            max_steers=2,
            min_remaining=timedelta(minutes=5),
            poll_interval_s=POLL_S,
            env_head_sha="aaa111",
            stage_hints=("review",),
        )

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    @property
    def watching(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def advance(self, seconds: float) -> None:
        """Move virtual time on by ``seconds``: the watcher polls at every tick on the way."""
        self.clock.advance_to(self.clock.monotonic() + seconds)

    def turn_end(self) -> None:
        """The agent's turn emits its ``result``: the watcher handles it at this virtual instant."""
        if self.watching:
            self.watcher.turn_ended(self.clock.now())
            self.clock.run_due()

    def finish(self, end_state: str) -> None:
        """End the iteration in ``end_state`` (a key of ``END_STATES``), then decide and post the
        receipt as the lifecycle does, and run every queued follow-up's pre-flight."""
        if end_state in TURN_LINES or end_state in STREAM_ENDS or end_state in LOST_ENDS:
            self._finish_turns(end_state)
            return
        exit_code, is_error, timed_out, lost, cancelled = END_STATES[end_state]
        self.end_state = end_state
        run = _RunFacts(plan=_Plan())
        if cancelled:
            run.cancelled.set()
            self.watcher.stop()
        else:
            self.watcher.close_turn_ends()
        self._end_watch()
        self.agent.exited = True
        agent = AgentRunResult(
            exit_code=exit_code,
            turns=1,
            steers=list(self.agent.acks),
            is_error=is_error,
            timed_out=timed_out,
            session_lost=lost,
            cancelled=cancelled,
            error="" if exit_code == 0 and not is_error else f"the agent ended: {end_state}",
            end=END_CLASSES[end_state],
        )
        self._decide(agent, run)

    def _finish_turns(self, end_state: str) -> None:
        """End the iteration by the turns of ``TURN_LINES[end_state]`` or the stdout of
        ``STREAM_ENDS[end_state]``, judged as the runtime does, or by a lost session of ``LOST_ENDS``."""
        self.end_state = end_state
        run = _RunFacts(plan=_Plan())
        self.watcher.close_turn_ends()
        self._end_watch()
        self.agent.exited = True
        if end_state in STREAM_ENDS:
            end = stream_end(end_state)
        elif end_state in LOST_ENDS:
            end = lost_end(end_state)
        else:
            end = iteration_end(end_state)
        agent = AgentRunResult(
            exit_code=0,
            turns=1,
            steers=list(self.agent.acks),
            is_error=not end.succeeded,
            error=error_text(end),
            end=end.end,
            end_rule=end.rule_id,
            session_lost=end_state in LOST_ENDS and not end.succeeded,
        )
        self._decide(agent, run)

    def _decide(self, agent: AgentRunResult, run: Any) -> None:
        result = session._result(agent, self.watcher) if self.thread is not None else session.IterationResult(agent)
        run.acked_steers = len(agent.steers)
        validated = work.agent_ok(result) and not run.cancelled.is_set()
        outcome = work.ActionRun._outcome(run, result, validated)  # type: ignore[arg-type]
        allowed = receipt_allowed(
            outcome,
            token_out_of_reach=run.children.reach.ok,
            cancelled=run.cancelled.is_set(),
            skipped=run.skipped,
            restricted=False,
        )
        if allowed:
            outcome = record_receipt(
                self.forge,
                facts_for(self.sim, FIX_RUN_ID),
                outcome,
                "http://sim/org/repo/issues/7",
                self.timeline,
                self.clock,
                self.log,
                receipt_signer(self.sim.oidc_request_url, OIDC_REQUEST_TOKEN, self.clock),
            )
        self.outcome = outcome
        self.skips = {f.run_id: self.preflight(f) for f in self.follow_ups}

    def preflight(self, follow_up: FollowUp) -> Skip | None:
        """The queued ``follow_up``'s pre-flight (``run_preflight``): a ``Skip`` or ``None`` (it does the work)."""
        return run_preflight(self.forge, facts_for(self.sim, follow_up.run_id, follow_up.attempt), self.log)

    def _end_watch(self) -> None:
        for _ in range(400):
            if not self.watching:
                return
            self.clock.run_due()
            due = self.clock.next_due_s()
            if due is not None:
                self.clock.advance_to(due)
            elif self.thread is not None:
                self.thread.join(0.05)  # nothing due: the watcher is in a real request; give it real time
        assert not self.watching, "the watch did not end"

    def receipts(self) -> list[Marker]:
        """Every comment on PR #7 whose whole body is a receipt written by the job token's login,
        but the forger's (who posts as that login too: :attr:`forged`)."""
        found = []
        for comment in self.sim.comments(7):
            marker = receipt_claim(comment["body"])
            if marker is not None and comment["user"]["login"] == JOB_LOGIN and int(comment["id"]) not in self.forged:
                found.append(marker)
        return found

    def close(self) -> None:
        if self.watching:
            self.watcher.stop()
            self._end_watch()
        # The server's loop notices a shutdown within its 50 ms poll; the next example need not wait.
        threading.Thread(target=self.sim.stop, name="promise-sim-stop", daemon=True).start()


@dataclass
class _Plan:
    """The ``RunPlan`` field ``ActionRun._outcome`` reads."""

    env_head_sha: str = "aaa111"
