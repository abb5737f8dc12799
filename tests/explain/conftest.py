"""Fixtures for ``fullsend explain`` tests: FIX in the simulator and a
reader token."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fullsend.simulator.fixtures import StandardScenario, fix_clock, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.explain_command import ITEM_CREATED_AT, READER_LOGIN, READER_TOKEN


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    with GitHubSimulator(clock=fix_clock()) as server:
        yield server


@pytest.fixture
def fix(sim: GitHubSimulator) -> StandardScenario:
    """FIX: PR #7 at aaa111, my run 33740015232 in flight (``dispatch / Review`` in progress)."""
    scenario = standard_pr_scenario(sim)
    sim.update_issue(7, created_at=ITEM_CREATED_AT)
    sim.add_token(READER_TOKEN, READER_LOGIN, "User")
    return scenario
