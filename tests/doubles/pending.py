"""How many steers a runtime's delivery state still holds: read for the tests, never by the product.

``lines_awaiting_echo(feed)``: the lines a ``SteerFeed`` wrote whose echo has not come yet;
``steers_queued(queue)``: the messages a ``CodexSteerQueue`` holds for the next resume.  Both read
the object's own state under its own lock, as the object itself does.
"""

from __future__ import annotations

from fullsend.adapters.runtimes.codex.exec.queue import CodexSteerQueue
from fullsend.adapters.runtimes.feed import SteerFeed


def lines_awaiting_echo(feed: SteerFeed) -> int:
    """How many written lines still await their echo."""
    with feed._mu:
        return sum(1 for entry in feed._outstanding if entry.outstanding)


def steers_queued(queue: CodexSteerQueue) -> int:
    """How many messages wait for the next resume."""
    with queue._mu:
        return len(queue._pending)
