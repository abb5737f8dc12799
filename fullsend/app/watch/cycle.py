"""One poll-and-steer cycle over a watcher's :class:`WatchState` (docs/architecture.md "Poll-and-steer cycle").

Outcomes (``fullsend.core.watch.settle.Outcome``): EMPTY (verdict reached, nothing to wait for),
STEERED, RETRY (no verdict: a transient failure or a pending candidate), CLOSED (the session can
no longer take a steer).  Only runs whose content reached the agent may be receipted (the runner
intersects ``WatchState.delivered`` with the runtime's acknowledgements).

Every decision logged here carries its rule id in brackets: the provenance ids (docs/rules.md#provenance), and
the project ids ``listing-unreadable`` (a permanent listing error: a verdict), ``listing-retry``
(a transient one), ``listing-bound`` (the 4-page cap was reached), ``shim-unresolvable``,
``empty-delta``, ``delivery-retry``, ``steered`` and ``left-to-queued``.

A read refused because GitHub's rate limit holds longer than the watcher's forge may wait inside a
request (``RateLimited``, nothing sent; docs/rules.md#rate-limited) pauses polling until the limit
ends (``WatchState.paused_until``), or, when it ends after the steer window, makes the cycle
LIMITED: the watcher settles and leaves later updates to the queued run.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime

from fullsend.app.watch.gating import after_listing, gate_says
from fullsend.app.watch.reads import read_snapshot
from fullsend.app.watch.state import WatchConfig, WatchPorts, WatchState
from fullsend.core.delta.changes import advance, build_delta
from fullsend.core.delta.records import Delta, TextResult
from fullsend.core.model import RunListing, WorkflowRun
from fullsend.core.provenance import verdicts as provenance
from fullsend.core.provenance.binding import authorizations, observed_authorizations
from fullsend.core.scalars import format_time
from fullsend.core.text.steertext import build_text
from fullsend.core.watch.settle import SESSION_CLOSED, Outcome
from fullsend.core.watch.steer import DeliveredSteer, SteerMessage
from fullsend.core.wire import AMENDMENT_EVENTS
from fullsend.errors import ForgeError, RateLimited, SteerAfterSettle, SteerSessionLost, SteerUnsupported

LISTING_PAGES = 4  # at most 4 pages …
LISTING_PER_PAGE = 100  # … of 100 runs: a poll sees at most the newest 400
LISTING_BOUND_RUNS = LISTING_PAGES * LISTING_PER_PAGE


def shim_file(path: str) -> str:
    """The workflow file to list: the basename of my run's ``path`` ("" when it has none)."""
    return path.rsplit("/", 1)[-1].strip() if isinstance(path, str) else ""


def steer_message(
    batch: Sequence[WorkflowRun], included: Sequence[WorkflowRun], delta: Delta, text: str
) -> SteerMessage:
    """The message for a batch.

    Its id is the newest included run, or the newest of the batch when nothing is included (an
    acknowledgement key only, never receipted; never 0, which would claim no follow-up run).
    ``actor`` only for the amendment event (a push's actor was never authorized), never
    ``triggering_actor``; ``head_sha`` only when the head moved.
    """
    head_run = included[-1] if included else batch[-1]
    return SteerMessage(
        follow_up_run_id=head_run.id,
        text=text,
        event=head_run.event,
        actor=head_run.actor if _confers_authority(head_run) else "",
        created_at=head_run.created_at,
        head_sha=delta.new_head if delta.head_moved else "",
    )


def _confers_authority(run: WorkflowRun) -> bool:
    """An amendment-event run on its first attempt with a known actor
    (docs/architecture.md "Amendments and context")."""
    return run.event in AMENDMENT_EVENTS and run.run_attempt == 1 and bool(run.actor)


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)


class Cycle:
    """The poll-and-steer cycle of one watcher: reads through ``ports``, remembers in ``state``.

    ``max_steers`` is the effective cap; ``cancelled`` is set by ``Watcher.stop()``.
    """

    def __init__(
        self, ports: WatchPorts, config: WatchConfig, state: WatchState, max_steers: int, cancelled: threading.Event
    ) -> None:
        self.ports, self.config, self.state = ports, config, state
        self.max_steers, self.cancelled = max_steers, cancelled

    def run(self, forced: bool = True) -> Outcome:
        """One cycle.  Never raises for forge or delivery errors.

        ``forced``: list whatever the listing gate says (a turn end, a settle decision); a
        gated cycle (``False``) whose gate is closed lists nothing and reports EMPTY
        (docs/architecture.md "Listing gate").  A cancelled watcher makes no call and delivers
        nothing: the cycle reports RETRY and the loop returns ``cancelled``.
        """
        st, clock = self.state, self.ports.clock
        if st.carry.steers >= self.max_steers:
            return Outcome.EMPTY
        if self.cancelled.is_set():
            return Outcome.RETRY
        try:
            if not gate_says(self.ports, self.config, st, forced):
                return Outcome.LIMITED if self._past_window() else Outcome.EMPTY
        except RateLimited as exc:
            self._pause(exc)
            return Outcome.LIMITED if self._past_window() else Outcome.RETRY
        batch, retry = self.poll()
        for run in batch:  # accepted: delivered later, or left to its queued run with the settle reason
            st.undecided[run.id] = "accepted"
        if self._past_window():
            if batch:
                self.ports.timeline.add(
                    clock.now(),
                    "poll",
                    f"poll: {len(batch)} accepted, past the steer window",
                    run_ids=tuple(r.id for r in batch),
                )
            return Outcome.LIMITED
        st.polls, st.last_poll_at = st.polls + 1, clock.now()
        said = f"poll: {len(batch)} accepted" + (", some pending" if retry else "")
        self.ports.timeline.add(st.last_poll_at, "poll", said, run_ids=tuple(r.id for r in batch))
        if not batch:
            return Outcome.RETRY if retry else Outcome.EMPTY
        snapshot = clock.now()
        assert st.baseline is not None
        try:
            auths = [a for a in authorizations(batch) if a.comment_id > 0]
            named = {a.comment_id for a in auths if not a.in_thread}
            threads = {a.comment_id for a in auths if a.in_thread}
            snap = read_snapshot(self.ports.forge, st.baseline, self.config.item_number, named, threads)
        except ForgeError as exc:
            self.ports.log("warning", f"Building the work-item delta failed: {exc} [delivery-retry]")
            if isinstance(exc, RateLimited):
                self._pause(exc)
            return Outcome.LIMITED if self._past_window() else Outcome.RETRY
        observed = observed_authorizations(st.carry.observed.values())
        delta = build_delta(st.baseline, snap, authorizations(batch), observed, st.self_logins, self.ports.wording)
        ids = [r.id for r in batch]
        if delta.empty:
            st.judged(ids)
            st.left.extend((i, "empty-delta") for i in ids)
            self.ports.log(
                "info", f"Follow-up run(s) {_ids(ids)} carried no visible change; not steering [empty-delta]"
            )
            return Outcome.RETRY if retry else Outcome.EMPTY
        return self._deliver(batch, delta, snapshot)

    # ---- listing and provenance ------------------------------------------------------------------
    def poll(self) -> tuple[list[WorkflowRun], bool]:
        """List and judge the shim's runs.  Returns (accepted batch oldest first, retry flag).

        The listing the forge returns again unchanged (every page's ETag the same: the same
        object) is not judged again while nothing is undecided: each of its runs was rejected or
        judged, and a verdict depends only on the record, my run and the judged set, which only
        grows (docs/architecture.md "Listing gate").

        A permanent listing failure (403, 404, an unresolvable shim path) is a verdict: an empty
        batch without retry, so a turn end settles.  A transient one asks for retry.
        """
        me = self.state.me
        assert me is not None
        workflow = shim_file(me.path)
        if not workflow:
            self.say_once(
                "warning",
                "shim",
                f"My run's workflow path {me.path!r} names no workflow file to list; "
                "no follow-up run can be found [shim-unresolvable]",
            )
            return [], False
        floor = me.fresh_after or self.config.started_at
        sent_at = (self.ports.clock.now(), self.ports.clock.monotonic())
        try:
            runs = self.ports.forge.list_workflow_runs(workflow, self.state.list_since or floor)
        except RateLimited as exc:
            self._pause(exc)
            return [], True
        except ForgeError as exc:
            rule = "listing-retry" if exc.transient else "listing-unreadable"
            self.say_once("warning", f"listing:{exc.status}", f"Listing follow-up runs failed: {exc} [{rule}]")
            return [], exc.transient
        self._note_bound(runs)
        batch: list[WorkflowRun] = []
        retry = False
        if runs is not self.state.judged_listing or self.state.undecided:
            for run in runs.runs:  # oldest first, each id once (the port's contract)
                verdict = self._judge(run)
                if verdict.outcome == "accept":
                    batch.append(run)
                retry = retry or verdict.outcome == "pending"
            self.state.judged_listing = runs
        after_listing(self.state, runs, {r.id for r in batch}, floor, sent_at)
        return batch, retry

    def _note_bound(self, runs: RunListing) -> None:
        """Log once per watcher when the listing reached its page cap (older runs fall to the queued run)."""
        if runs.capped:
            self.say_once(
                "info",
                "listing-bound",
                f"The follow-up listing reached its bound of {LISTING_PAGES} pages "
                f"({LISTING_BOUND_RUNS} runs); older follow-up runs are left to the queued run "
                "[listing-bound]",
            )

    def _judge(self, run: WorkflowRun) -> provenance.Verdict:
        """Phase A, then (if it passed) phase B with one jobs read; records observed/judged."""
        st = self.state
        assert st.me is not None
        verdict = provenance.judge_record(run, st.me, st.carry.seen)
        if verdict.observe:
            st.carry.observed[run.id] = run
        if verdict.outcome == "accept":
            try:
                jobs = self.ports.forge.list_run_jobs(run.id)
            except ForgeError as exc:
                if isinstance(exc, RateLimited):
                    self._pause(exc)
                verdict = provenance.jobs_unreadable(run.id, exc.permanent, f"reading its jobs failed: {exc}")
            else:
                verdict = provenance.judge_jobs(run, jobs, st.me)
        if verdict.judged:
            st.judged([run.id])
        elif verdict.outcome == "pending":
            st.undecided[run.id] = verdict.rule_id
        self._report(verdict)
        return verdict

    def _report(self, verdict: provenance.Verdict) -> None:
        """Log a verdict once per (run, rule, outcome): a repeated phase-A rejection does not flood the log.

        ``self`` (my own run, listed by every poll) and ``once`` (judged before) are not news.
        """
        key = (verdict.run_id, verdict.rule_id, verdict.outcome)
        if verdict.rule_id in ("self", "once") or key in self.state.reported:
            return
        self.state.reported.add(key)
        level = "warning" if verdict.check == "jobs" else "info"
        self.ports.log(level, verdict.log_line())
        self.ports.timeline.add(
            self.ports.clock.now(),
            "judge",
            verdict.log_line(),
            rule_id=verdict.rule_id or "accept",
            run_ids=(verdict.run_id,),
        )

    def _pause(self, exc: RateLimited) -> None:
        """Hold the polls until GitHub's limit ends (the loop reads ``paused_until``); said once per limit.

        A read the limit refused was not sent; its candidates stay undecided and are judged again
        after the pause.  A limit that outlasts the steer window is reported by the settle line.
        """
        st = self.state
        st.paused_until = max(st.paused_until or exc.until, exc.until)
        if not self._past_window():
            self.say_once(
                "info",
                f"rate-limited:{format_time(exc.until)}",
                "GitHub's rate limit holds until "
                f"{format_time(exc.until)}; pausing the polls until then [rate-limited]",
            )

    def _past_window(self) -> bool:
        """True when a known rate limit ends after the steer window (the watch deadline)."""
        deadline, until = self.config.deadline, self.state.paused_until
        return until is not None and deadline is not None and until >= deadline

    def say_once(self, level: str, kind: str, message: str) -> None:
        """Log ``message`` the first time ``kind`` happens in this watcher (one warning per kind)."""
        if kind not in self.state.said:
            self.state.said.add(kind)
            self.ports.log(level, message)

    # ---- delivery (docs/architecture.md "Delivery") ------------------------------------------------------
    def _deliver(self, batch: list[WorkflowRun], delta: Delta, snapshot: datetime) -> Outcome:
        text = build_text(batch, delta, self.ports.wording)
        if text.findings:
            self.ports.log(
                "warning", f"Unicode sanitization altered the steer text ({text.findings} finding(s) stripped)"
            )
        # Project decision (safe direction): an issue_comment run that confers no authority (a re-run,
        # or an unknown attempt) carried its command as context at most, so it is never claimed as
        # absorbed; the queued run redoes it.
        powerless = {r.id for r in batch if r.event in AMENDMENT_EVENTS and not _confers_authority(r)}
        included = [r for r in batch if r.id not in text.excluded and r.id not in powerless]
        dropped = [r.id for r in batch if r.id in text.excluded or r.id in powerless]
        msg = steer_message(batch, included, delta, text.text)
        if self.cancelled.is_set():
            return Outcome.RETRY
        sent_at = self.ports.clock.now()  # the timeline's steer row: before the agent's acknowledgement, always
        failed = self._send(msg)
        if failed is not None:
            return failed
        if dropped:
            st = self.state
            st.judged(dropped)
            self.ports.log(
                "warning",
                f"Follow-up run(s) {_ids(dropped)} did not reach the agent in full (too large "
                "for the steer text, or bound to no comment); leaving them to the queued run "
                "[left-to-queued]",
            )
            st.left_to_queued.extend(dropped)
            unbound = set(delta.unbound) | powerless
            st.left.extend((i, "unbound" if i in unbound else "too-large") for i in dropped)
        self._mark_steered(msg.follow_up_run_id, included, delta, text, snapshot, sent_at)
        return Outcome.STEERED

    def _send(self, msg: SteerMessage) -> Outcome | None:
        """Deliver under the sandbox lock; map the sentinels (by class) to outcomes."""
        ports = self.ports
        try:
            with ports.lock:
                ports.steerer.steer(ports.sandbox_name, msg)
        except SteerUnsupported:
            ports.log("warning", f"Runtime cannot steer; leaving the update to the queued run [{SESSION_CLOSED}]")
            return Outcome.CLOSED
        except SteerAfterSettle:
            ports.log(
                "warning",
                f"The agent session had already settled; leaving the update to the queued run [{SESSION_CLOSED}]",
            )
            return Outcome.CLOSED
        except SteerSessionLost:
            ports.log(
                "warning",
                "The agent session was lost during the steer interrupt; leaving the update to the "
                f"queued run [{SESSION_CLOSED}]",
            )
            self.state.session_lost = True
            return Outcome.CLOSED
        except Exception as exc:  # any other error: the batch stays unjudged and is re-sent next poll
            ports.log("warning", f"Delivering the steer failed: {type(exc).__name__}: {exc} [delivery-retry]")
            return Outcome.RETRY
        return None

    def _mark_steered(
        self,
        message_id: int,
        runs: list[WorkflowRun],
        delta: Delta,
        text: TextResult,
        snapshot: datetime,
        sent_at: datetime,
    ) -> None:
        """Record the delivery, judge its runs, spend a steer only if it carried any.  The steer
        row is dated ``sent_at``, when the runtime was handed the message (its acknowledgement can
        come before that call returns), and names each run's ``actor`` (commenter, pusher) once."""
        st, included = self.state, [r.id for r in runs]
        st.delivered.append(DeliveredSteer(message_id, tuple(included)))
        st.judged(included)
        st.last_steer_at = self.ports.clock.now()
        if included:
            st.carry.steers += 1
        assert st.baseline is not None
        st.carry.baseline = advance(st.baseline, delta, text, snapshot)
        carried = _ids(included) or "none that may be receipted"
        self.ports.log(
            "info",
            f"Steered the agent with follow-up run(s) {carried} as message {message_id} "
            f"({st.carry.steers} of {self.max_steers} steers spent) [steered]",
        )
        self.ports.timeline.add(
            sent_at,
            "steer",
            f"steer {len(st.delivered)}: follow-up run(s) {carried}",
            rule_id="steered",
            run_ids=tuple(included),
            authors=tuple(dict.fromkeys(r.actor for r in runs if r.actor)),
        )
