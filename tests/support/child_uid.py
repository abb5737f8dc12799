"""The child uid a test composes into the action's deployment (``tests/support/sim_entry.py``).

The action ends every process of its child uid when a run ends (docs/architecture.md "Process
isolation"), so two runs that share a uid and a PID namespace end each other's agents.  The suite
runs tests on several pytest-xdist workers at once: each worker gets its own uid (and the same
number as gid), so no test's run can end another test's agent.
"""

from __future__ import annotations

import os


def worker_child_uid(base: int) -> int:
    """``base`` plus this xdist worker's index (``gw3`` → ``base + 3``); ``base`` outside xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return base + (int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0)
