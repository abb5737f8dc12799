"""One chunk of the long profile of the receipt's promise, outside pytest (docs/architecture.md
"The receipt's promise").

``python -m tests.property.promise_worker <seed> <interleavings>`` runs the state machine of
``tests.property.promise_machine`` under the long profile with that seed and budget, then prints
``interleavings run: <n>``: the command a failing chunk of ``test_receipt_promise.py`` prints to
replay it alone.  A counterexample exits 1 after hypothesis printed it (with the blob to
reproduce it).
"""

from __future__ import annotations

import sys
import traceback

from hypothesis import settings

from tests.property.promise_machine import ReceiptPromise
from tests.property.promise_profiles import LONG, run_promise


class CountedPromise(ReceiptPromise):
    """The machine, counting the interleavings that ran to their end (teardown)."""

    ran = 0

    def teardown(self) -> None:
        CountedPromise.ran += 1  # on this class: hypothesis runs a seeded subclass
        super().teardown()


def run_counted(seed: int, budget: int) -> int:
    """Run ``budget`` interleavings with ``seed``; returns how many ran to their end (at least
    ``budget`` when the promise held); raises what the failing check raised."""
    CountedPromise.ran = 0
    replay = f"python -m tests.property.promise_worker {seed} {budget}"
    run_promise(settings(LONG, max_examples=budget), CountedPromise, seed=seed, replay=replay)
    return CountedPromise.ran


def main(argv: list[str]) -> int:
    """Run ``argv[0]`` (seed) with ``argv[1]`` interleavings; 0 when the promise held, 1 on a counterexample."""
    seed, budget = int(argv[0]), int(argv[1])
    try:
        ran = run_counted(seed, budget)
    except Exception:  # a counterexample: hypothesis printed it; the traceback says which check broke
        traceback.print_exc()
        print(f"interleavings run: {CountedPromise.ran}", flush=True)
        return 1
    print(f"interleavings run: {ran}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
