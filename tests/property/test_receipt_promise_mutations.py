"""A test of the test: break one guarantee of the receipt's promise on purpose and the state machine
must find it (issue 23 acceptance; docs/architecture.md "The receipt's promise").

Each mutation patches one real part of the system under test; the machine then runs with a small
budget, generation only (no shrinking), and must fail with the message of the check that guards
that guarantee.  Slow tier: seconds each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from fullsend.adapters.runtimes import verdict
from fullsend.adapters.runtimes.claude import refusals, tasks
from fullsend.adapters.runtimes.claude import stream as claude_stream
from fullsend.app.action import finish
from fullsend.app.action.agent import session, work
from fullsend.app.action.skip import receipt, receipt_proof
from fullsend.app.watch import cycle
from fullsend.core.agent_end import AgentEnd, EndVerdict
from fullsend.core.model import Comment
from fullsend.core.provenance import verdicts as provenance
from fullsend.core.receipt import marker as marker_module
from fullsend.core.receipt import signed as signed_module
from fullsend.core.receipt.proof.verify import ProofVerdict
from fullsend.core.watch.steer import DeliveredSteer, SteerMessage
from fullsend.simulator.fixtures import JOB_TOKEN
from tests.property.promise_machine import MIN_STEPS, NOT_SUCCESS, ReceiptPromise

HUNT = settings(
    max_examples=400,
    stateful_step_count=25,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _receipt_on_any_end_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work, "agent_ok", lambda result: True)  # every end state counts as outright success
    # ... and the receipt writer's own guard on the agent's end class is blinded too (both layers)
    real = receipt.should_post_receipt
    monkeypatch.setattr(receipt, "should_post_receipt", lambda **kw: real(**{**kw, "agent_end": AgentEnd.SUCCESS}))


def _receipt_names_unacknowledged_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    real = marker_module.marker_from

    def every_delivered(delivered: Sequence[DeliveredSteer], acked: Iterable[int], head: str) -> marker_module.Marker:
        return real(delivered, [batch.message_id for batch in delivered], head)

    monkeypatch.setattr(session, "marker_from", every_delivered)


def _a_queued_run_skips_on_another_runs_receipt(monkeypatch: pytest.MonkeyPatch) -> None:
    """The update of a run nobody absorbed is dropped: its queued run skips on a receipt naming others."""
    real = signed_module.receipts_listing_run

    def any_receipt(comments: Sequence[Comment], receipt_login: str, my_run_id: int) -> list[Any]:
        return [found for c in comments for rid in _ids(c) for found in real(comments, receipt_login, rid)]

    monkeypatch.setattr(receipt, "receipts_listing_run", any_receipt)


def _ids(comment: Comment) -> tuple[int, ...]:
    found = signed_module.receipt_claim(comment.body or "")
    return found.consumed if found else ()


def _a_signed_receipt_honoured_without_its_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: the reader honours a signed receipt whatever its proof says; the forger's then
    make queued runs skip on a receipt their own run never wrote."""
    monkeypatch.setattr(receipt_proof.ProofReads, "verdict", lambda self, found, comment: ProofVerdict(True))


def _two_receipts_for_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    real = receipt.post_receipt

    def twice(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(receipt, "post_receipt", twice)


def _a_delivered_run_missing_from_the_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """A delivered run that no receipt names vanishes: only the watcher's own list is shown."""

    def watcher_list_only(
        left: Sequence[tuple[int, str]],
        delivered: Iterable[int],
        acknowledged: Iterable[int],
        receipted: Iterable[int],
        maybe_receipted: Iterable[int] = (),
    ) -> list[tuple[int, str]]:
        return [pair for pair in left if pair[0] not in set(receipted)]

    monkeypatch.setattr(finish, "left_over", watcher_list_only)


def _a_run_of_a_failed_route_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provenance passes a run whose Route job did not conclude success."""
    real = provenance.judge_jobs

    def lenient(*args: Any, **kwargs: Any) -> provenance.Verdict:
        verdict = real(*args, **kwargs)
        if verdict.rule_id != "route-not-success":
            return verdict
        return replace(verdict, outcome="accept", rule_id="", check="", judged=False)

    monkeypatch.setattr(provenance, "judge_jobs", lenient)


def _the_job_token_in_a_steer(monkeypatch: pytest.MonkeyPatch) -> None:
    real = cycle.steer_message

    def leaking(*args: Any) -> SteerMessage:
        message = real(*args)
        return replace(message, text=f"{message.text}\n{JOB_TOKEN}")

    monkeypatch.setattr(cycle, "steer_message", leaking)


def _a_later_automatic_success_overrides_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """The iteration's end is its last turn again: a turn the CLI ran by itself hides a failed one."""
    monkeypatch.setattr(verdict, "judged_turn", lambda kept, new: new)


def _delegated_work_stopped_taken_for_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """delegated-unfinished: a sub-agent the CLI stopped (or left running) is forgotten."""
    monkeypatch.setattr(tasks.TaskLedger, "unfinished", lambda self: [])


def _a_refusal_in_a_tool_result_unseen(monkeypatch: pytest.MonkeyPatch) -> None:
    """tool-refused: only ``permission_denials`` counts again, which leaves this refusal out."""
    monkeypatch.setattr(refusals.ToolCalls, "refusals", lambda self, obj: [])


def _a_turn_the_cli_opened_unseen(monkeypatch: pytest.MonkeyPatch) -> None:
    """turn-unjudged: only an acknowledged input opens a turn again."""
    monkeypatch.setattr(claude_stream, "opens_turn", lambda obj: False)


def _announced_turns_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """turn-unjudged: a last result announcing more turns is taken as the last word."""
    monkeypatch.setattr(claude_stream, "announces_more_turns", lambda result: False)


def _no_stop_reason_taken_for_success(monkeypatch: pytest.MonkeyPatch) -> None:
    """turn-unjudged: ``stop_reason: null`` passes without an answer of the model."""
    monkeypatch.setattr(claude_stream, "unanswered", lambda result, answered: False)


def _a_lost_session_taken_for_success(monkeypatch: pytest.MonkeyPatch) -> None:
    """session-lost: the runtime reports a resume in another thread as a finished turn."""
    done = EndVerdict(AgentEnd.SUCCESS, "", "the agent finished")
    monkeypatch.setattr(verdict, "session_lost", lambda why: done)


# mutation -> (the patch, what the machine's failing check says)
MUTATIONS: dict[str, tuple[Callable[[pytest.MonkeyPatch], None], str]] = {
    "receipt-on-a-non-success-end-state": (_receipt_on_any_end_state, "a receipt after the agent ended"),
    "receipt-naming-an-unacknowledged-run": (_receipt_names_unacknowledged_runs, "the agent acknowledged"),
    "a-queued-run-skipping-on-another-runs-receipt": (
        _a_queued_run_skips_on_another_runs_receipt,
        "skipped on no receipt naming it",
    ),
    "two-receipts-for-one-run": (_two_receipts_for_one_run, "receipts for one run"),
    "a-signed-receipt-honoured-without-its-proof": (
        _a_signed_receipt_honoured_without_its_proof,
        "skipped on no receipt naming it",
    ),
    "a-delivered-run-missing-from-the-summary": (
        _a_delivered_run_missing_from_the_summary,
        "neither receipted nor left over",
    ),
    "a-run-of-a-failed-route-accepted": (
        _a_run_of_a_failed_route_accepted,
        "never passed provenance|the receipt names runs never accepted",
    ),
    "the-job-token-in-a-steer": (_the_job_token_in_a_steer, "the job token reached the agent"),
    "a-later-automatic-success-overrides-a-failure": (
        _a_later_automatic_success_overrides_a_failure,
        "a receipt after the agent ended turns:",
    ),
    "delegated-work-stopped-taken-for-done": (
        _delegated_work_stopped_taken_for_done,
        "a receipt after the agent ended stream:sub-agent-",
    ),
    "a-refusal-in-a-tool-result-unseen": (
        _a_refusal_in_a_tool_result_unseen,
        "a receipt after the agent ended stream:refusal-missing-from-permission-denials",
    ),
    "a-turn-the-cli-opened-unseen": (
        _a_turn_the_cli_opened_unseen,
        "a receipt after the agent ended stream:turn-the-cli-opened-cut-off",
    ),
    "announced-turns-ignored": (
        _announced_turns_ignored,
        "a receipt after the agent ended stream:more-turns-announced-",
    ),
    "no-stop-reason-taken-for-success": (
        _no_stop_reason_taken_for_success,
        "a receipt after the agent ended stream:no-stop-reason-no-answer",
    ),
    "a-lost-session-taken-for-success": (_a_lost_session_taken_for_success, "a receipt after the agent ended lost:"),
}


#: mutation -> the end states it breaks: the hunt ends runs in those, or in success, so that each of
#: them is drawn often enough among the machine's ~40 end states (issue 43 added most of them); the
#: checks that must catch it are the machine's own.
FOCUS: dict[str, str] = {
    "a-later-automatic-success-overrides-a-failure": "turns:automatic-success-after-",
    "delegated-work-stopped-taken-for-done": "stream:sub-agent-",
    "a-refusal-in-a-tool-result-unseen": "stream:refusal-",
    "a-turn-the-cli-opened-unseen": "stream:turn-the-cli-opened-",
    "announced-turns-ignored": "stream:more-turns-announced-",
    "no-stop-reason-taken-for-success": "stream:no-stop-reason-",
    "a-lost-session-taken-for-success": "lost:",
}


def focused(prefix: str) -> type[ReceiptPromise]:
    """The machine whose runs end (``finish``) in the end states starting with ``prefix``, or in success."""
    states = [s for s in NOT_SUCCESS if s.startswith(prefix)]
    assert states, f"no end state starts with {prefix!r}"

    class Focused(ReceiptPromise):
        @precondition(lambda self: self.world.outcome is None and self.steps >= MIN_STEPS)
        @rule(end_state=st.sampled_from([*states, "success"]))
        def finish(self, end_state: str) -> None:
            super().finish(end_state)

    return Focused


@pytest.mark.slow
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_state_machine_finds_a_broken_guarantee(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    patch, says = MUTATIONS[mutation]
    patch(monkeypatch)
    machine = focused(FOCUS[mutation]) if mutation in FOCUS else ReceiptPromise
    with pytest.raises(AssertionError, match=says):
        run_state_machine_as_test(machine, settings=HUNT)
