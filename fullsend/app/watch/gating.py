"""The listing gate's reads and the listing's moving bound, for one cycle (docs/architecture.md "Listing gate").

The decisions are ``fullsend.core.watch.gate``'s; this module reads the work item's version
through the forge (conditional reads: free when unchanged) and feeds them the state.
"""

from __future__ import annotations

from datetime import datetime

from fullsend.app.watch.state import WatchConfig, WatchPorts, WatchState
from fullsend.core.model import RunListing
from fullsend.core.watch import gate
from fullsend.errors import ForgeError, RateLimited


def gate_says(ports: WatchPorts, config: WatchConfig, state: WatchState, forced: bool) -> str:
    """Why to list now (a ``gate.OPEN_*`` reason), or ``gate.CLOSED`` (``""``).

    A forced listing reads nothing.  Otherwise the item's version is read; a read that fails
    opens the gate (an unknown version never keeps the listing shut).

    Raises:
        RateLimited: the item read was refused by a rate limit (nothing sent); the caller pauses.
    """
    version: str | None = None
    if not forced:
        assert state.baseline is not None
        try:
            version = ports.forge.item_version(config.item_number, state.baseline.is_pull_request)
        except RateLimited:
            raise
        except ForgeError:
            version = None
    state.gate, why = gate.decide(state.gate, ports.clock.monotonic(), version, bool(state.undecided), forced)
    return why


def after_listing(
    state: WatchState, runs: RunListing, accepted: set[int], floor: datetime, sent_at: tuple[datetime, float]
) -> None:
    """Record a complete listing sent at ``sent_at`` (``Clock.now``, ``Clock.monotonic``): the
    backstop counts from it and the ``created>=`` bound moves up (``gate.moved_bound``) to keep
    every undecided run and every run of ``accepted`` (ids not yet delivered), never past
    them; it stays where it is when the listing reached its page cap or lacks an undecided run."""
    state.gate = gate.listed(state.gate, sent_at[1])
    keep = set(state.undecided) | accepted
    listed = {run.id for run in runs.runs}
    if runs.capped or not keep <= listed:
        return  # an undecided run this listing did not show: keep the bound where it is
    undecided = [run.created_at for run in runs.runs if run.id in keep]
    current = state.list_since or floor
    state.list_since = gate.moved_bound(current, floor, sent_at[0], undecided, [r.created_at for r in runs.runs])
