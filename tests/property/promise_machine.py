"""The receipt's promise as a hypothesis state machine (docs/architecture.md "The receipt's promise").

Each example is one run of the action (:class:`~tests.property.receipt_world.World`): the rules
add follow-up comments and shim runs, move the head, edit and delete comments, inject faults,
move virtual time, post forged receipts as the job token's login (another workflow of the
repository, issue 45), and make the agent acknowledge, drop or end its turn; ``finish`` ends the run
in a drawn end state (or teardown ends it in success), posts the receipt as the lifecycle does and
runs every queued follow-up's pre-flight.  The invariant is checked after every step and at the end.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from fullsend.app.action.finish import render_summary
from fullsend.core.receipt.marker import normalize_ids, receipt_body
from fullsend.core.receipt.signed import receipt_audience, signed_receipt_body, whole_body_signed_receipt
from fullsend.rules import rule_ids
from fullsend.simulator.faults import drop_field, not_json
from fullsend.simulator.fixtures import (
    FIX_RUN_ID,
    JOB_LOGIN,
    JOB_TOKEN,
    add_comment_follow_up,
    add_follow_up_run,
    genuine_receipt,
    shim_workflow_ref,
    stage_job_identity,
)
from fullsend.simulator.issuer import STRANGER_KEY, claims_for, sign_jwt
from fullsend.simulator.server import GitHubSimulator
from tests.property.receipt_world import END_STATES, HANG_S, POLL_S, FollowUp, World
from tests.property.turn_ends import LOST_ENDS, STREAM_ENDS, TURN_LINES

# kind -> (add_follow_up_run keyword arguments, may the watcher accept it)
KINDS: dict[str, tuple[dict[str, object], bool]] = {
    "comment": ({}, True),
    "review": ({"event": "pull_request_review", "pull_requests": (7,)}, True),
    "unauthorized": ({"route": "failure"}, False),
    "route-pending": ({"route": "in_progress"}, False),
    "other-item": ({"pr": 8}, False),
    "other-workflow": ({"path": ".github/workflows/other.yml"}, False),
    "re-run": ({"run_attempt": 2}, True),
}
ENDPOINTS = [
    r"/actions/workflows/[^/]+/runs$",
    r"/actions/runs/\d+/jobs$",
    r"/actions/runs/\d+$",
    r"/issues/7/comments",
    r"/issues/comments/\d+$",
    r"/pulls/7$",
    r"/compare/",
    r"/user$",
    r"/graphql$",
    r"/_services/token/\.well-known/jwks$",  # the issuer's keys, read for a signed receipt's proof
]
#: Another workflow of the repository posts, as the job token's login, a receipt-shaped comment
#: listing a queued run (issue 45): unsigned, or with a proof it could get.
FORGERIES = ("unsigned", "stranger-key", "own-workflow-token", "branch-run", "job-of-the-shim", "other-item")
OTHER_WORKFLOW_RUN = 33740019999
MIN_STEPS = 8  # a run ends (rule ``finish``) only after this many steps; teardown ends it in success
#: Every end that is not success; each turn- or stream-drawn end twice as often as the rest.
NOT_SUCCESS = sorted(END_STATES.keys() - {"success"}) + sorted([*TURN_LINES, *STREAM_ENDS]) * 2 + sorted(LOST_ENDS)
FAULTS = [
    "500",
    "502",
    "429",
    "rate-limit",
    "rate-limit-past-the-window",
    "not-json",
    "drop-id",
    "drop-created_at",
    "reset",
    "truncate",
    "timeout",
]
#: X-RateLimit-Reset of a primary limit: a minute after ORIGIN, or two hours (past the 50-minute steer window).
RESETS = {"rate-limit": "1788429720", "rate-limit-past-the-window": "1788436860"}
LEFT_LINE = re.compile(r"^- follow-up run (\d+) \[([a-z-]+)\]$", re.MULTILINE)


def forged_receipt(sim: GitHubSimulator, how: str, target: int, head: str) -> str:
    """The body a forger of kind ``how`` (:data:`FORGERIES`) posts to list run ``target``."""
    if how == "unsigned":
        return receipt_body([target], head)
    if how == "stranger-key":
        audience = receipt_audience("org/repo", 7, FIX_RUN_ID, [target], head)
        claims = claims_for(stage_job_identity(sim, FIX_RUN_ID), audience, sim.issuer.url, sim.issuer.now())
        return signed_receipt_body(
            [target], head, FIX_RUN_ID, sign_jwt(claims, STRANGER_KEY, kid=sim.issuer.signing.kid)
        )
    if how == "other-item":
        genuine = whole_body_signed_receipt(genuine_receipt(sim, [target], head, item=8))
        assert genuine is not None
        return signed_receipt_body([target], head, FIX_RUN_ID, genuine.proof)
    other = "org/repo/.github/workflows/triage-bot.yml@refs/heads/main"
    identity, writer = {
        "own-workflow-token": ({"workflow_ref": other, "job_workflow_ref": other}, OTHER_WORKFLOW_RUN),
        "branch-run": ({"workflow_ref": shim_workflow_ref(sim, "refs/heads/evil")}, FIX_RUN_ID),
        "job-of-the-shim": ({"job_workflow_ref": shim_workflow_ref(sim)}, FIX_RUN_ID),
    }[how]
    return genuine_receipt(sim, [target], head, writer_run_id=writer, identity=identity)


class ReceiptPromise(RuleBasedStateMachine):
    """Random interleavings of one run; fails on any false "already handled" or lost update."""

    def __init__(self) -> None:
        super().__init__()
        self.world = World()
        self.steps = 0
        self.replayed = False

    # ---- the work item and the shim's runs ----------------------------------------------------
    @precondition(lambda self: self.world.outcome is None)
    @rule(kind=st.sampled_from(sorted(KINDS)), with_comment=st.booleans())
    def add_follow_up(self, kind: str, with_comment: bool) -> None:
        fields, acceptable = KINDS[kind]
        sim, comment_id = self.world.sim, 0
        if with_comment and kind != "other-item":
            comment, run = add_comment_follow_up(
                sim, f"/fs-review please also check case {len(self.world.follow_ups)}", **fields
            )  # type: ignore[arg-type]
            comment_id = int(comment["id"])
        else:
            run = add_follow_up_run(sim, **fields)  # type: ignore[arg-type]
        attempt = int(fields.get("run_attempt", 1))  # type: ignore[call-overload]
        self.world.follow_ups.append(FollowUp(int(run["id"]), kind, attempt, acceptable, comment_id))

    @precondition(lambda self: self.world.outcome is None)
    @rule(ack=st.booleans())
    def a_comment_reaches_the_agent(self, ack: bool) -> None:
        """One whole steer round (a macro of the rules above and below): a reviewer comments, the
        watcher's next poll delivers it, and the agent (when ``ack``) echoes it.  Without it too few
        random interleavings get as far as a receipt to test one."""
        self.add_follow_up("comment", with_comment=True)
        self.world.advance(POLL_S + 1)
        if ack:
            self.world.agent.ack()

    @precondition(lambda self: self.world.outcome is None)
    @rule(sha=st.sampled_from(["bbb222", "ccc333", "ddd444"]))
    def move_head(self, sha: str) -> None:
        if self.world.head != sha:
            self.world.sim.move_head(7, sha, files=[{"filename": "orders.sql", "patch": "@@ -1 +1 @@\n-a\n+b"}])
            self.world.head = sha

    @precondition(lambda self: self.world.outcome is None and any(f.comment_id for f in self.world.follow_ups))
    @rule(data=st.data(), delete=st.booleans())
    def edit_or_delete_comment(self, data: st.DataObject, delete: bool) -> None:
        follow_up = data.draw(st.sampled_from([f for f in self.world.follow_ups if f.comment_id]))
        self.world.comments_changed += 1
        if delete:
            self.world.sim.delete_comment(follow_up.comment_id)
            follow_up.comment_id = 0
        else:
            self.world.sim.edit_comment(follow_up.comment_id, "edited: never mind")

    @precondition(lambda self: self.world.outcome is None and self.world.faults < 2)
    @rule(
        endpoint=st.sampled_from(ENDPOINTS),
        fault=st.sampled_from(FAULTS),
        times=st.integers(1, 3),
        post=st.booleans(),
        now=st.integers(0, 5),
    )
    def inject_fault(self, endpoint: str, fault: str, times: int, post: bool, now: int) -> None:
        if now:  # five draws in six inject nothing: most runs stay fault-free, so the strict checks apply
            return
        sim, method = self.world.sim, "POST" if (post and "comments" in endpoint) or "graphql" in endpoint else "GET"
        self.world.faults += 1
        if fault in ("500", "502"):
            sim.fail(method, endpoint, int(fault), times)
        elif fault == "429":
            sim.fail(method, endpoint, 429, times, headers={"Retry-After": "2"})
        elif fault in RESETS:
            sim.fail(
                method, endpoint, 403, times, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": RESETS[fault]}
            )
        elif fault == "not-json":
            sim.mutate(method, endpoint, not_json(), times)
        elif fault.startswith("drop-"):
            sim.mutate(method, endpoint, drop_field(fault.removeprefix("drop-")), times)
        elif fault == "timeout":  # no answer until the client's read timeout passed: real seconds, so rarer
            if times == 1 and not post:  # about one interleaving in 400
                sim.fail_connection(method, endpoint, "hang", 1, hang_s=HANG_S)
                self.world.timeouts += 1
        else:  # reset or truncate: a POST's comment may exist although its answer was lost
            sim.fail_connection(method, endpoint, fault, times)

    @precondition(lambda self: self.world.outcome is None and bool(self.world.follow_ups))
    @rule(data=st.data(), how=st.sampled_from(FORGERIES))
    def a_forger_posts_as_the_job_tokens_login(self, data: st.DataObject, how: str) -> None:
        """A receipt no run of this shim and dispatch wrote, listing a queued run: it never makes
        that run skip (check_the_queued_runs counts only the run's own receipt)."""
        target = data.draw(st.sampled_from([f.run_id for f in self.world.follow_ups]))
        comment = self.world.sim.add_comment(7, forged_receipt(self.world.sim, how, target, self.world.head), JOB_LOGIN)
        self.world.forged.add(int(comment["id"]))

    # ---- time and the agent -------------------------------------------------------------------
    @precondition(lambda self: self.world.outcome is None)
    @rule(seconds=st.sampled_from([1.0, 10.0, 30.0, 61.0, 300.0]))
    def advance(self, seconds: float) -> None:
        self.world.advance(seconds)

    # Preconditions read only what the test itself did: hypothesis replays a prefix of draws and
    # needs the same rules enabled, while what the system delivered may vary with real HTTP timing
    # (a kept-alive connection the server dropped is noticed before reuse, or not).
    @precondition(lambda self: self.world.outcome is None)
    @rule(how=st.sampled_from(["ack", "ack", "ack", "fold", "drop"]))
    def agent_reads_a_line(self, how: str) -> None:
        """The agent answers its first pending line (nothing happens when none is pending)."""
        agent = self.world.agent
        if how == "fold":  # two lines answered together: both echoed
            agent.ack()
            agent.ack()
        elif how == "ack":
            agent.ack()
        else:
            agent.drop()

    @precondition(lambda self: self.world.outcome is None)
    @rule(now=st.integers(0, 4))
    def turn_end(self, now: int) -> None:
        if not now:  # one draw in five: a turn end with nothing pending settles the run early
            self.world.turn_end()

    @precondition(lambda self: self.world.outcome is None)
    @rule(updates=st.integers(0, 2), wait_s=st.sampled_from([5.0, 60.0, 600.0]))
    def updates_during_the_delegated_wait(self, updates: int, wait_s: float) -> None:
        """Once the watcher settled, the agent's input is closed and the CLI may still wait for work
        it delegated (``delegated_wait_seconds``, issue 43): updates arriving meanwhile are never
        steered, so they stay with their queued runs (the end's checks: no receipt names them, and
        in a quiet world each queued run does the work).  Before the settle the same updates are
        ordinary ones.  What the rule does never depends on the watcher (see the preconditions'
        note above): only the check does."""
        settled = not self.world.watching
        seen = len(self.world.agent.seen)
        for _ in range(updates):
            self.add_follow_up("comment", with_comment=True)
        self.world.advance(wait_s)
        assert not settled or len(self.world.agent.seen) == seen, "an update reached the agent after the settle"

    @precondition(lambda self: self.world.outcome is None and self.steps >= MIN_STEPS)
    # success about half the time
    @rule(end_state=st.sampled_from(NOT_SUCCESS + ["success"] * len(NOT_SUCCESS)))
    def finish(self, end_state: str) -> None:
        self.world.finish(end_state)
        self.check_the_end()

    @precondition(lambda self: self.world.outcome is not None)
    @rule()
    def replay_a_queued_run(self) -> None:
        """After the run: a queued run that starts again (a replay) decides as it did the first time.
        Once: after the run nothing changes the world, so a second replay would read the same
        answers (it is the only rule left, so hypothesis keeps drawing it to the step count)."""
        if self.replayed:
            return
        self.replayed = True
        for follow_up in self.world.follow_ups[:1]:
            again = self.world.preflight(follow_up)
            assert (again is None) == (self.world.skips[follow_up.run_id] is None) or self.world.faults

    # ---- the invariant ------------------------------------------------------------------------
    @invariant()
    def count_the_step(self) -> None:
        self.steps += 1

    @invariant()
    def nothing_unacceptable_is_delivered(self) -> None:
        if self.world.outcome is None and self.world.thread is not None:
            refused = {f.run_id for f in self.world.follow_ups if not f.acceptable}
            delivered = {rid for batch in self.world.watcher.result().delivered for rid in batch.run_ids}
            assert not delivered & refused, f"delivered runs that never passed provenance: {delivered & refused}"

    @invariant()
    def the_job_token_stays_out_of_reach(self) -> None:
        assert not any(JOB_TOKEN in m.text for m in self.world.agent.seen), "the job token reached the agent"
        assert not any(JOB_TOKEN in line for _, line in self.world.logs), "the job token is in a log line"

    def check_the_end(self) -> None:
        """The invariant of docs/architecture.md "The receipt's promise", once the run is over."""
        world = self.world
        assert world.outcome is not None
        receipts = world.receipts()
        assert len(receipts) <= 1, f"{len(receipts)} receipts for one run"
        listed = receipts[0].consumed if receipts else ()
        self.check_the_receipt(listed, bool(receipts))
        self.check_nothing_is_dropped(listed)
        self.check_the_queued_runs(listed)
        assert FIX_RUN_ID not in listed

    def check_the_receipt(self, listed: tuple[int, ...], posted: bool) -> None:
        """Only after outright success, naming exactly the acknowledged runs, each of them accepted."""
        world, outcome = self.world, self.world.outcome
        assert outcome is not None
        acked = {a.follow_up_run_id for a in world.agent.acks}
        absorbed = normalize_ids(
            rid
            for batch in (world.watcher.result().delivered if world.thread else [])
            if batch.message_id in acked
            for rid in batch.run_ids
        )
        if posted:
            assert world.end_state == "success", f"a receipt after the agent ended {world.end_state}"
            assert listed == absorbed, f"the receipt lists {listed}, the agent acknowledged {absorbed}"
            # The outputs name the receipt, unless its post got no answer: then they claim nothing.
            claimed = "" if outcome.receipt_unknown else ",".join(map(str, listed))
            assert outcome.consumed_run_ids == claimed, "the outputs differ from the receipt"
        acceptable = {f.run_id for f in world.follow_ups if f.acceptable}
        assert set(listed) <= acceptable, f"the receipt names runs never accepted: {set(listed) - acceptable}"
        if world.end_state == "success" and absorbed and not world.faults:
            assert listed == absorbed, "an outright success that absorbed updates posted no receipt"

    def check_nothing_is_dropped(self, listed: tuple[int, ...]) -> None:
        """Every run the watcher accepted is in the receipt or in the summary's Left to the queued run."""
        world, outcome = self.world, self.world.outcome
        assert outcome is not None
        accepted = {rid for e in world.timeline.events if e.kind == "poll" for rid in e.run_ids}
        summary = render_summary(outcome, "review", "#7", world.timeline)
        pairs = [(int(m.group(1)), m.group(2)) for m in LEFT_LINE.finditer(summary)]
        left = {rid for rid, _ in pairs}
        dropped = accepted - set(listed) - left
        assert not dropped, f"accepted run(s) {sorted(dropped)} are neither receipted nor left over: {summary}"
        assert len(left) == len(pairs), f"a run is left over twice: {pairs}"
        assert {why for _, why in pairs} <= rule_ids(), f"a left-over reason is no rule id: {pairs}"
        both = [(rid, why) for rid, why in pairs if rid in listed and why != "receipt-unknown"]
        assert not both, f"receipted run(s) also left over: {both}"

    def check_the_queued_runs(self, listed: tuple[int, ...]) -> None:
        """Safety always: a queued run skips only on a receipt naming it.  Efficiency (a named run
        does skip) only in a quiet world: faults, edits and deletions may make the pre-flight fail
        open, which costs a redone update, never a lost one."""
        world = self.world
        for follow_up in world.follow_ups:
            should_skip = follow_up.run_id in listed and follow_up.attempt == 1
            skipped = world.skips[follow_up.run_id] is not None
            assert should_skip or not skipped, f"queued run {follow_up.run_id} skipped on no receipt naming it"
            if not world.faults and not world.comments_changed:
                assert skipped == should_skip, (
                    f"queued run {follow_up.run_id} ({follow_up.kind}) "
                    f"{'skipped' if skipped else 'did the work'}; receipt lists {listed}; "
                    f"log tail: {world.logs[-4:]}"
                )

    def teardown(self) -> None:
        try:
            if self.world.outcome is None:
                self.world.finish("success")
                self.check_the_end()
        finally:
            self.world.close()
