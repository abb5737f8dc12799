"""A test of the test: break one guarantee of the receipt's promise on purpose and the state machine
must find it (issue 23 acceptance; docs/architecture.md "The receipt's promise").

Each mutation patches one real part of the system under test; the machine then runs with a small
budget, generation only (no shrinking), and must fail.  Slow tier: about a minute each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from fullsend.app.action import preflight, session, work
from fullsend.core.agent_end import AgentEnd
from fullsend.core.model import Comment
from fullsend.core.receipt import marker as marker_module
from fullsend.core.watch.steer import DeliveredSteer
from tests.property.promise_machine import ReceiptPromise

HUNT = settings(max_examples=400, stateful_step_count=25, deadline=None, database=None, phases=[Phase.generate],
               derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _receipt_on_any_end_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work, "_agent_ok", lambda result: True)  # every end state counts as outright success
    # ... and the receipt writer's own guard on the agent's end class is blinded too (both layers)
    real = work.should_post_receipt
    monkeypatch.setattr(work, "should_post_receipt", lambda **kw: real(**{**kw, "agent_end": AgentEnd.SUCCESS}))


def _receipt_names_unacknowledged_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    real = marker_module.marker_from

    def every_delivered(delivered: Sequence[DeliveredSteer], acked: Iterable[int], head: str) -> marker_module.Marker:
        return real(delivered, [batch.message_id for batch in delivered], head)

    monkeypatch.setattr(session, "marker_from", every_delivered)


def _a_queued_run_skips_on_another_runs_receipt(monkeypatch: pytest.MonkeyPatch) -> None:
    """The update of a run nobody absorbed is dropped: its queued run skips on a receipt naming others."""
    real = marker_module.receipt_listing_run

    def any_receipt(comments: Sequence[Comment], receipt_login: str, my_run_id: int) -> Comment | None:
        listed = [real(comments, receipt_login, rid) for c in comments for rid in _ids(c)]
        return next((c for c in listed if c is not None), None)  # skips on a receipt naming another run

    monkeypatch.setattr(preflight, "receipt_listing_run", any_receipt)


def _ids(comment: Comment) -> tuple[int, ...]:
    found = marker_module.whole_body_receipt(comment.body or "")
    return found.consumed if found else ()


MUTATIONS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "receipt-on-a-non-success-end-state": _receipt_on_any_end_state,
    "receipt-naming-an-unacknowledged-run": _receipt_names_unacknowledged_runs,
    "a-queued-run-skipping-on-another-runs-receipt": _a_queued_run_skips_on_another_runs_receipt,
}


@pytest.mark.slow
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_state_machine_finds_a_broken_guarantee(monkeypatch: pytest.MonkeyPatch, mutation: str) -> None:
    MUTATIONS[mutation](monkeypatch)
    with pytest.raises(AssertionError):
        run_state_machine_as_test(ReceiptPromise, settings=HUNT)
