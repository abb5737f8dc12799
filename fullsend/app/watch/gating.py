"""The listing gate's reads and the listing's moving bound, for one cycle (docs/architecture.md "Listing gate").

The decisions are ``fullsend.core.watch.gate``'s; this module reads the work item's version
through the forge (conditional reads: free when unchanged) and feeds them the state.
"""

from __future__ import annotations

from datetime import datetime

from fullsend.app.watch.state import WatchConfig, WatchPorts, WatchState
from fullsend.core.model import ItemVersion, RunListing
from fullsend.core.provenance.binding import bound_to_item
from fullsend.core.provenance.verdicts import ALLOWED_EVENTS
from fullsend.core.watch import gate
from fullsend.errors import ForgeError, RateLimited


def gate_says(ports: WatchPorts, config: WatchConfig, state: WatchState, forced: bool) -> str:
    """Why to list now (a ``gate.OPEN_*`` reason), or ``gate.CLOSED`` (``""``).

    A forced listing reads nothing.  Otherwise the item's version is read; a read that fails
    opens the gate (an unknown version never keeps the listing shut).

    Raises:
        RateLimited: the item read was refused by a rate limit (nothing sent); the caller pauses.
    """
    version: ItemVersion | None = None
    if not forced:
        assert state.baseline is not None
        try:
            version = ports.forge.item_version(config.item_number, state.baseline.is_pull_request)
        except RateLimited:
            raise
        except ForgeError:
            version = None
    key, changed_at = (version.key, version.updated_at) if version is not None else (None, None)
    now_s = ports.clock.monotonic()
    state.gate, why = gate.decide(state.gate, now_s, key, bool(state.undecided), forced, changed_at)
    return why


def after_listing(
    state: WatchState, runs: RunListing, accepted: set[int], floor: datetime, sent_at: tuple[datetime, float]
) -> None:
    """Record a complete listing sent at ``sent_at`` (``Clock.now``, ``Clock.monotonic``): the
    backstop counts from it; the window of the item's last change closes if the listing shows
    that change's run of my item and nothing else is undecided (``gate.settled``: the runs of
    ``accepted`` count as decided, a failed delivery keeps them pending); and the ``created>=``
    bound moves up (``gate.moved_bound``) to keep every undecided run and every run of
    ``accepted`` (ids not yet delivered), never past them; it stays where it is when the listing
    reached its page cap or lacks an undecided run."""
    state.gate = gate.listed(state.gate, sent_at[1])
    me = state.me
    mine = (  # read only while a window is open (``gate.settled``)
        r.created_at
        for r in runs.runs
        if me and r.event in ALLOWED_EVENTS and bound_to_item(r, me.item_number, me.run_name)
    )
    state.gate = gate.settled(state.gate, sent_at[1], mine, bool(set(state.undecided) - accepted))
    keep = set(state.undecided) | accepted
    if runs.capped or (keep and not keep <= {run.id for run in runs.runs}):
        return  # an undecided run this listing did not show: keep the bound where it is
    undecided = [run.created_at for run in runs.runs if run.id in keep]
    current = state.list_since or floor
    state.list_since = gate.moved_bound(current, floor, sent_at[0], undecided, [r.created_at for r in runs.runs])
