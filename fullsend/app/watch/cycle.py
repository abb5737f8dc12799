"""One poll-and-steer cycle for a ``Watcher`` (docs/architecture.md "Poll-and-steer cycle").

Outcomes (``fullsend.core.watch.settle.Outcome``): EMPTY (verdict reached, nothing to wait for),
STEERED, RETRY (no verdict: a transient failure or a pending candidate), CLOSED (the session can
no longer take a steer).  Only runs whose content reached the agent may be receipted (the runner
intersects ``Watcher.delivered`` with the runtime's acknowledgements).

Every decision logged here carries its rule id in brackets: the provenance ids (docs/rules.md#provenance), and
the project ids ``listing-unreadable`` (a permanent listing error: a verdict), ``listing-retry``
(a transient one), ``listing-bound`` (the 4-page cap was reached), ``shim-unresolvable``,
``empty-delta``, ``delivery-retry``, ``steered`` and ``left-to-queued``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from fullsend.app.watch.reads import read_snapshot
from fullsend.core.delta.changes import Delta, TextResult, advance, build_delta, build_text
from fullsend.core.model import DeliveredSteer, SteerMessage, WorkflowRun
from fullsend.core.provenance import verdicts as provenance
from fullsend.core.provenance.binding import authorizations, observed_authorizations
from fullsend.core.text.wire import AMENDMENT_EVENTS
from fullsend.core.watch.settle import SESSION_CLOSED, Outcome
from fullsend.errors import ForgeError, SteerAfterSettle, SteerSessionLost, SteerUnsupported

if TYPE_CHECKING:
    from fullsend.app.watch.watcher import Watcher
LISTING_PAGES = 4  # at most 4 pages …
LISTING_PER_PAGE = 100  # … of 100 runs: a poll sees at most the newest 400
LISTING_BOUND_RUNS = LISTING_PAGES * LISTING_PER_PAGE


def shim_file(path: str) -> str:
    """The workflow file to list: the basename of my run's ``path`` ("" when it has none)."""
    return path.rsplit("/", 1)[-1].strip() if isinstance(path, str) else ""


def poll(w: Watcher) -> tuple[list[WorkflowRun], bool]:
    """List and judge the shim's runs.  Returns (accepted batch oldest first, retry flag).

    A permanent listing failure (403, 404, an unresolvable shim path) is a verdict: an empty
    batch without retry, so a turn end settles.  A transient one asks for retry.
    """
    me = w.me
    assert me is not None
    workflow = shim_file(me.path)
    if not workflow:
        w.warn_once("shim", f"My run's workflow path {me.path!r} names no workflow file to list; "
                    "no follow-up run can be found [shim-unresolvable]")
        return [], False
    try:
        runs = w.forge.list_workflow_runs(workflow, me.fresh_after or w.config.started_at)
    except ForgeError as exc:
        rule = "listing-retry" if exc.transient else "listing-unreadable"
        w.warn_once(f"listing:{exc.status}", f"Listing follow-up runs failed: {exc} [{rule}]")
        return [], exc.transient
    _note_bound(w, runs)
    batch: list[WorkflowRun] = []
    retry = False
    for run in provenance.order_listing(runs):
        verdict = _judge(w, run)
        if verdict.outcome == "accept":
            batch.append(run)
        retry = retry or verdict.outcome == "pending"
    return batch, retry


def _note_bound(w: Watcher, runs: Sequence[WorkflowRun]) -> None:
    """Log once per watcher when the listing reached its page cap (older runs fall to the queued run).

    The adapter may mark its result with ``capped``; otherwise a full 400 runs is taken as capped.
    """
    capped = getattr(runs, "capped", None)
    if capped is None:
        capped = len(runs) >= LISTING_BOUND_RUNS
    if capped:
        w.info_once("listing-bound", f"The follow-up listing reached its bound of {LISTING_PAGES} pages "
                    f"({LISTING_BOUND_RUNS} runs); older follow-up runs are left to the queued run [listing-bound]")


def _judge(w: Watcher, run: WorkflowRun) -> provenance.Verdict:
    """Phase A, then (if it passed) phase B with one jobs read; records observed/judged."""
    me = w.me
    assert me is not None
    verdict = provenance.judge_record(run, me, w.carry.seen)
    if verdict.observe:
        w.carry.observed[run.id] = run
    if verdict.outcome == "accept":
        try:
            jobs = w.forge.list_run_jobs(run.id)
        except ForgeError as exc:
            verdict = provenance.jobs_unreadable(run.id, exc.permanent, f"reading its jobs failed: {exc}")
        else:
            verdict = provenance.judge_jobs(run, jobs, me)
    if verdict.judged:
        w.carry.seen.add(run.id)
        w.undecided.pop(run.id, None)
    elif verdict.outcome == "pending":
        w.undecided[run.id] = verdict.rule_id
    _report(w, verdict)
    return verdict


def _report(w: Watcher, verdict: provenance.Verdict) -> None:
    """Log a verdict once per (run, rule, outcome): a repeated phase-A rejection does not flood the log.

    ``self`` (my own run, listed by every poll) and ``once`` (judged before) are not news.
    """
    key = (verdict.run_id, verdict.rule_id, verdict.outcome)
    if verdict.rule_id in ("self", "once") or key in w.reported:
        return
    w.reported.add(key)
    level = "warning" if verdict.check == "jobs" else "info"
    w.log(level, verdict.log_line())
    w.timeline.add(w.clock.now(), "judge", verdict.log_line(), rule_id=verdict.rule_id or "accept",
                   run_ids=(verdict.run_id,))


def poll_and_steer(w: Watcher) -> Outcome:
    """One cycle.  Never raises for forge or delivery errors.

    A cancelled watcher (``stop()``) makes no call and delivers nothing: the cycle reports RETRY
    and the loop returns ``cancelled`` (as a cancelled context fails the Go watcher's calls).
    """
    if w.carry.steers >= w.max_steers:
        return Outcome.EMPTY
    if w.cancelled:
        return Outcome.RETRY
    batch, retry = poll(w)
    w.timeline.add(w.clock.now(), "poll", f"poll: {len(batch)} accepted" + (", some pending" if retry else ""),
                   run_ids=tuple(r.id for r in batch))
    if not batch:
        return Outcome.RETRY if retry else Outcome.EMPTY
    for run in batch:
        w.undecided[run.id] = "accepted"
    snapshot = w.clock.now()
    assert w.state is not None
    try:
        snap = read_snapshot(w.forge, w.state, w.config.item_number)
    except ForgeError as exc:
        w.log("warning", f"Building the work-item delta failed: {exc} [delivery-retry]")
        return Outcome.RETRY
    observed = observed_authorizations(w.carry.observed.values())
    delta = build_delta(w.state, snap, authorizations(batch), observed, w.self_logins, w.wording)
    ids = [r.id for r in batch]
    if delta.empty:
        _judged(w, ids)
        w.log("info", f"Follow-up run(s) {_ids(ids)} carried no visible change; not steering [empty-delta]")
        return Outcome.RETRY if retry else Outcome.EMPTY
    return _deliver(w, batch, delta, snapshot)


def steer_message(batch: Sequence[WorkflowRun], included: Sequence[WorkflowRun], delta: Delta,
                  text: str) -> SteerMessage:
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


def _deliver(w: Watcher, batch: list[WorkflowRun], delta: Delta, snapshot: datetime) -> Outcome:
    text = build_text(batch, delta, w.wording)
    if text.findings:
        w.log("warning", f"Unicode sanitization altered the steer text ({text.findings} finding(s) stripped)")
    # Project decision (safe direction): an issue_comment run that confers no authority (a re-run,
    # or an unknown attempt) carried its command as context at most, so it is never claimed as
    # absorbed; the queued run redoes it.
    powerless = {r.id for r in batch if r.event in AMENDMENT_EVENTS and not _confers_authority(r)}
    included = [r for r in batch if r.id not in text.excluded and r.id not in powerless]
    dropped = [r.id for r in batch if r.id in text.excluded or r.id in powerless]
    msg = steer_message(batch, included, delta, text.text)
    if w.cancelled:
        return Outcome.RETRY
    failed = _send(w, msg)
    if failed is not None:
        return failed
    if dropped:
        _judged(w, dropped)
        w.log("warning", f"Follow-up run(s) {_ids(dropped)} did not reach the agent in full (too large for the "
              "steer text, or bound to no comment); leaving them to the queued run [left-to-queued]")
        w.left_to_queued.extend(dropped)
        unbound = set(delta.unbound) | powerless
        w.left.extend((i, "unbound" if i in unbound else "too-large") for i in dropped)
    _mark_steered(w, msg.follow_up_run_id, [r.id for r in included], delta, text, snapshot)
    return Outcome.STEERED


def _send(w: Watcher, msg: SteerMessage) -> Outcome | None:
    """Deliver under the sandbox lock; map the sentinels (by class) to outcomes."""
    try:
        with w.lock:
            w.steerer.steer(w.sandbox_name, msg)
    except SteerUnsupported:
        w.log("warning", f"Runtime cannot steer; leaving the update to the queued run [{SESSION_CLOSED}]")
        return Outcome.CLOSED
    except SteerAfterSettle:
        w.log("warning", "The agent session had already settled; leaving the update to the queued run "
                         f"[{SESSION_CLOSED}]")
        return Outcome.CLOSED
    except SteerSessionLost:
        w.log("warning", "The agent session was lost during the steer interrupt; leaving the update to the "
              f"queued run [{SESSION_CLOSED}]")
        w.session_lost = True
        return Outcome.CLOSED
    except Exception as exc:  # any other error: the batch stays unjudged and is re-sent next poll
        w.log("warning", f"Delivering the steer failed: {type(exc).__name__}: {exc} [delivery-retry]")
        return Outcome.RETRY
    return None


def _mark_steered(w: Watcher, message_id: int, included: list[int], delta: Delta, text: TextResult,
                  snapshot: datetime) -> None:
    """``markSteered``: record the delivery, judge its runs, spend a steer only if it carried any."""
    w.delivered.append(DeliveredSteer(message_id, tuple(included)))
    _judged(w, included)
    w.last_steer_at = w.clock.now()
    if included:
        w.carry.steers += 1
    assert w.state is not None
    w.state = advance(w.state, delta, text, snapshot)
    w.carry.baseline = w.state
    carried = _ids(included) or "none that may be receipted"
    w.log("info", f"Steered the agent with follow-up run(s) {carried} as message {message_id} "
          f"({w.carry.steers} of {w.max_steers} steers spent) [steered]")
    w.timeline.add(w.last_steer_at, "steer", f"steer {len(w.delivered)}: follow-up run(s) {carried}",
                   rule_id="steered", run_ids=tuple(included))


def _judged(w: Watcher, ids: Sequence[int]) -> None:
    w.carry.seen.update(ids)
    for i in ids:
        w.undecided.pop(i, None)


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)
