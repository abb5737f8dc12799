"""The receipt's promise holds for random interleavings (docs/architecture.md "The receipt's promise").

Two profiles of one state machine (``tests.property.promise_machine.ReceiptPromise``, profiles in
``tests.property.promise_profiles``): ``fast`` (200 interleavings) in the default suite and
``long`` (10,000, the full tier, ``.ci/run``) as ``LONG_CHUNKS`` tests of ``CHUNK_INTERLEAVINGS``
each, seeded ``seed + chunk``, which pytest-xdist spreads over its workers.  Each prints its seed
and the command that replays it alone; ``RECEIPT_PROMISE_SEED=S`` gives chunk ``i`` the seed
``S + i``.
"""

from __future__ import annotations

import pytest

from tests.property.promise_profiles import (
    CHUNK_INTERLEAVINGS,
    FAST,
    LONG_CHUNKS,
    LONG_INTERLEAVINGS,
    chosen_seed,
    run_promise,
)
from tests.property.promise_worker import run_counted

#: Measured: about 30 CPU-seconds a chunk; six times that under the full tier's load on 2 cores.
CHUNK_TIMEOUT_S = 600


def test_the_receipt_promise_holds_for_hundreds_of_interleavings() -> None:
    run_promise(FAST)


def test_the_chunks_add_up_to_ten_thousand_interleavings() -> None:
    assert LONG_CHUNKS * CHUNK_INTERLEAVINGS == LONG_INTERLEAVINGS == 10_000


@pytest.mark.slow
@pytest.mark.full
@pytest.mark.timeout(CHUNK_TIMEOUT_S)
@pytest.mark.parametrize("chunk", range(LONG_CHUNKS), ids=lambda chunk: f"chunk{chunk:02d}")
def test_the_receipt_promise_holds_for_ten_thousand_interleavings(chunk: int) -> None:
    """One chunk of the long profile: ``CHUNK_INTERLEAVINGS`` interleavings with its own seed."""
    seed = (chosen_seed() + chunk) % 2**32
    ran = run_counted(seed, CHUNK_INTERLEAVINGS)
    assert ran >= CHUNK_INTERLEAVINGS, f"chunk {chunk} (seed {seed}) ran {ran} interleavings"
    print(f"receipt promise, chunk {chunk} of {LONG_CHUNKS}: {ran} interleavings run")
