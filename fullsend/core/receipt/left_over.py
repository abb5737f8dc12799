"""What a run leaves to the queued runs (docs/architecture.md "The receipt's promise").

Every follow-up run the watcher accepted ends in exactly one of two places: the posted receipt,
which lets its queued run skip, or the step summary's **Left to the queued run**, which says why
its queued run will do the work.  The watcher already lists the runs it never delivered or
dropped from a message (``docs/rules.md#left-to-queued``, ``#unbound``, ``#too-large``, a settle
reason); this module adds the runs it delivered that no receipt names: the agent never
acknowledged them (``docs/rules.md#not-acknowledged``), or it did but the run posted no receipt
(``docs/rules.md#no-receipt``: it failed, was cancelled, or the post failed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: A delivered run the agent never acknowledged (no echo, a rejected steer, a lost line).
RULE_NOT_ACKNOWLEDGED = "not-acknowledged"
#: An acknowledged run of a run that posted no receipt.
RULE_NO_RECEIPT = "no-receipt"
LEFT_OVER_RULE_IDS: tuple[str, ...] = (RULE_NOT_ACKNOWLEDGED, RULE_NO_RECEIPT)


def left_over(left: Sequence[tuple[int, str]], delivered: Iterable[int], acknowledged: Iterable[int],
              receipted: Iterable[int]) -> list[tuple[int, str]]:
    """Every follow-up run left to its queued run, as ``(run id, rule id)`` pairs.

    ``left`` is the watcher's own list (kept first, in its order); ``delivered`` the run ids the
    shipped iteration's steers carried; ``acknowledged`` those of them the agent acknowledged;
    ``receipted`` the run ids of the receipt actually posted (empty when none was).  Each run id
    appears once; a receipted run never appears.
    """
    receipted_ids, acked = set(receipted), set(acknowledged)
    out = [(run_id, why) for run_id, why in left if run_id not in receipted_ids]
    listed = {run_id for run_id, _ in out}
    for run_id in sorted(set(delivered) - receipted_ids - listed):
        out.append((run_id, RULE_NO_RECEIPT if run_id in acked else RULE_NOT_ACKNOWLEDGED))
    return out
