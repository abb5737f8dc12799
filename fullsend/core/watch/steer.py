"""What the watcher hands a runtime and what the runtime acknowledges (docs/architecture.md "Delivery").

Re-exported by ``fullsend.core.model``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class SteerMessage:
    """What the watcher hands a Steerer.

    ``follow_up_run_id`` is the message id of the batch (0 only for a local run).  Every field is
    runner-authored; only the *content* of ``text`` comes from the work item.
    """

    follow_up_run_id: int
    text: str
    event: str = ""
    actor: str = ""
    created_at: datetime | None = None
    head_sha: str = ""


@dataclass(frozen=True)
class SteerResult:
    """One acknowledged steer; ``mode`` is ``live`` or ``resume``."""

    follow_up_run_id: int
    delivered_at: datetime
    mode: str = "live"


@dataclass(frozen=True)
class DeliveredSteer:
    """A batch the watcher delivered: its message id and the run ids it carried ."""

    message_id: int
    run_ids: tuple[int, ...] = field(default_factory=tuple)
