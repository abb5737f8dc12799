"""How a watcher settles: the words of each settle decision and the bounded settle call (docs/architecture.md "Settle").

Every settle decision is logged in the project's words, tagged with its rule id (the settle
reasons of docs/rules.md#settle).  Settling the steerer runs on a helper thread awaited through ``Clock.join``
for at most :data:`SETTLE_TIMEOUT_S`, so a hung runtime cannot hold the watcher.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from fullsend.app.watch.state import WatchPorts
from fullsend.core.scalars import format_time
from fullsend.core.watch import settle

SETTLE_TIMEOUT_S = 30.0  # the bound on settling the steerer


def _minutes(span: timedelta) -> str:
    minutes, seconds = divmod(int(span.total_seconds()), 60)
    return f"{minutes} min" + (f" {seconds} s" if seconds else "")


def settle_words(
    reason: str,
    max_steers: int,
    min_remaining: timedelta,
    paused_until: datetime | None = None,
    retry_polls: int = settle.MAX_RETRY_POLLS,
) -> str:
    """The log line of a settle decision: what happened in the project's words, then ``[reason]``.

    ``paused_until`` is when the rate limit that settled the run ends (``rate-limited``);
    ``retry_polls`` the verdict-less polls that settled it (``settle.retry_polls``)."""
    says = {
        settle.TURN_END_NOTHING_NEW: "The agent's turn ended and nothing new is pending; settling the run",
        settle.VERDICTLESS_POLLS_EXHAUSTED: f"No verdict after {retry_polls} polls; settling rather "
        "than holding the run",
        settle.CAP_REACHED: f"Steer cap of {max_steers} reached; settling the run",
        settle.DEADLINE: "Steer deadline reached; settling the run",
        settle.LOW_ON_TIME: f"Less than {_minutes(min_remaining)} of run budget left; settling instead of steering",
        settle.SESSION_CLOSED: "The agent session can take no more steers; settling the run",
        settle.CANCELLED: "The watch was cancelled; settling the run",
        settle.RATE_LIMITED: f"GitHub's rate limit holds until {format_time(paused_until)}, past this run's "
        "steer window or longer than the agent may wait at its turn end; settling and "
        "leaving later updates to the queued run",
    }
    return f"{says.get(reason, 'Settling the run')} [{reason}]"


def settle_steerer(ports: WatchPorts, reason: str) -> None:
    """Tell the steerer no more steers will come, then add the timeline's ``settle`` row for ``reason``.

    The call runs on a helper thread holding the sandbox lock; the watcher waits for it through
    ``ports.clock.join`` at most :data:`SETTLE_TIMEOUT_S` seconds.  An error or a timeout is
    warned, never raised.
    """
    errors: list[BaseException] = []

    def call() -> None:
        try:
            with ports.lock:
                ports.steerer.settle(ports.sandbox_name)
        except Exception as exc:
            errors.append(exc)

    worker = threading.Thread(target=call, name="fullsend-settle", daemon=True)
    worker.start()
    if not ports.clock.join(worker, SETTLE_TIMEOUT_S):
        ports.log("warning", f"Settling the agent session failed: no answer within {SETTLE_TIMEOUT_S:g} s")
    elif errors:
        ports.log("warning", f"Settling the agent session failed: {type(errors[0]).__name__}: {errors[0]}")
    ports.timeline.add(ports.clock.now(), "settle", f"settled ({reason})", rule_id=reason)
