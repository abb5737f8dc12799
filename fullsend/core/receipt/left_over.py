"""What a run leaves to the queued runs (docs/architecture.md "The receipt's promise").

Every follow-up run the watcher accepted ends in exactly one of two places: the posted receipt,
which lets its queued run skip, or the step summary's **Left to the queued run**, which says why
its queued run will do the work.  The watcher already lists the runs it never delivered or
dropped from a message (a pending provenance rule, ``docs/rules.md#left-to-queued``, ``#unbound``,
``#too-large``, ``#empty-delta``, a settle reason); this module adds the runs it delivered that
no receipt names: the agent never acknowledged them (``docs/rules.md#not-acknowledged``), it did
but no receipt was posted (``docs/rules.md#no-receipt``), or the receipt's post got no answer, so
it may exist (``docs/rules.md#receipt-unknown``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: A delivered run the agent never acknowledged (no echo, a rejected steer, a lost line).
RULE_NOT_ACKNOWLEDGED = "not-acknowledged"
#: An acknowledged run that no posted receipt names.
RULE_NO_RECEIPT = "no-receipt"
#: An acknowledged run whose receipt's post got no answer: the receipt may exist.
RULE_RECEIPT_UNKNOWN = "receipt-unknown"
LEFT_OVER_RULE_IDS: tuple[str, ...] = (RULE_NOT_ACKNOWLEDGED, RULE_NO_RECEIPT, RULE_RECEIPT_UNKNOWN)


def left_over(
    left: Sequence[tuple[int, str]],
    delivered: Iterable[int],
    acknowledged: Iterable[int],
    receipted: Iterable[int],
    maybe_receipted: Iterable[int] = (),
) -> list[tuple[int, str]]:
    """Every follow-up run left to its queued run, as ``(run id, rule id)`` pairs, one per run id.

    ``left`` is the watchers' own list, oldest iteration first: a run listed more than once keeps
    its first place and its last reason.  ``delivered`` are the run ids the steers carried (their
    reason replaces one from ``left``); ``acknowledged`` those of them the agent acknowledged;
    ``receipted`` the run ids of the receipt actually posted (empty when none was);
    ``maybe_receipted`` those of a receipt whose post got no answer.  A receipted run never
    appears; delivered runs absent from ``left`` follow it, in id order.
    """
    receipted_ids, acked, maybe = set(receipted), set(acknowledged), set(maybe_receipted)
    reasons: dict[int, str] = {}
    for run_id, why in left:
        if run_id not in receipted_ids:
            reasons[run_id] = why
    for run_id in sorted(set(delivered) - receipted_ids):  # a later delivery says more than a run left before it
        if run_id in maybe:
            reasons[run_id] = RULE_RECEIPT_UNKNOWN
        else:
            reasons[run_id] = RULE_NO_RECEIPT if run_id in acked else RULE_NOT_ACKNOWLEDGED
    return list(reasons.items())
