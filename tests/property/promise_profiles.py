"""The profiles the receipt's promise runs under, and a seeded run (docs/architecture.md "The receipt's promise").

Found examples are kept in ``tests/property/examples-db`` (hypothesis replays them first on
every run, CI's included); shrunk counterexamples are written out as the example tests of
``test_receipt_promise_examples.py``.  ``RECEIPT_PROMISE_SEED`` replays a printed seed.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import seed as use_seed
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import run_state_machine_as_test

from tests.property.promise_machine import ReceiptPromise

EXAMPLES_DB = DirectoryBasedExampleDatabase(str(Path(__file__).parent / "examples-db"))
FAST = settings(
    max_examples=200,
    stateful_step_count=25,
    deadline=None,
    database=EXAMPLES_DB,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
#: The full tier's budget, run as ``LONG_CHUNKS`` pytest items of ``CHUNK_INTERLEAVINGS`` each, with
#: seeds ``seed``, ``seed + 1`` …, that pytest-xdist spreads over its workers like any other test.
LONG_INTERLEAVINGS = 10_000
LONG_CHUNKS = 20
CHUNK_INTERLEAVINGS = LONG_INTERLEAVINGS // LONG_CHUNKS
LONG = settings(FAST, max_examples=CHUNK_INTERLEAVINGS)


def chosen_seed() -> int:
    """``RECEIPT_PROMISE_SEED`` when set to a number, else a fresh random one."""
    raw = os.environ.get("RECEIPT_PROMISE_SEED", "")
    return int(raw) if raw.isdigit() else random.SystemRandom().randrange(2**32)


def run_promise(
    profile: settings, machine: type[ReceiptPromise] = ReceiptPromise, seed: int | None = None, replay: str = ""
) -> None:
    """Run ``machine`` under ``profile`` with ``seed`` (default :func:`chosen_seed`), printed first
    with ``replay`` (default ``RECEIPT_PROMISE_SEED=<seed>``) so a failure reproduces; raises what
    the machine's failing check raised."""
    value = chosen_seed() if seed is None else seed
    print(f"receipt promise: seed {value} (replay with {replay or f'RECEIPT_PROMISE_SEED={value}'})", flush=True)
    seeded = use_seed(value)(type(f"{machine.__name__}Seeded", (machine,), {}))
    run_state_machine_as_test(seeded, settings=profile)
