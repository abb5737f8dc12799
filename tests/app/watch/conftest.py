"""Fixtures of the watcher tests: a started simulator holding FIX, and the rig around it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fullsend.simulator.server import GitHubSimulator
from tests.app.watch.watch_rig import Rig, SimClock, make_rig


@pytest.fixture
def rig() -> Iterator[Rig]:
    clock = SimClock()
    with GitHubSimulator(clock=clock.now) as sim:
        yield make_rig(sim, clock)
