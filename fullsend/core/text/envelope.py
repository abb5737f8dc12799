"""The v1 steer envelope the runtime wraps around the watcher's text (docs/architecture.md "Envelope").

Layout (bracketed parts are our prose, each without a line break):

    Runner update: your task inputs changed after this run started.\\n\\n     (WIRE opening line)
    [delivery sentence] [no-authority | authority | authorized-run sentence]\\n\\n
    [no-new-powers sentence]\\n\\n
    Source: <src, joined ", ">\\n\\n
    <msg.text, verbatim>

Provenance fields (``actor``, ``event``, ``head_sha``) pass through ``field_safe`` so none of them
can start a line; ``text`` is never touched and the assembled envelope is never scanned again.
The envelope vouches for the actor only on an amendment event (``issue_comment``).
"""

from __future__ import annotations

from fullsend.core.prose import Wording
from fullsend.core.scalars import format_time
from fullsend.core.text.sanitize import field_safe
from fullsend.core.watch.steer import SteerMessage
from fullsend.core.wire import AMENDMENT_EVENTS, OPENING_LINE, SOURCE_NONE, SOURCE_PREFIX

__all__ = ["OPENING_LINE", "render_envelope", "source_items"]


def source_items(msg: SteerMessage) -> list[str]:
    """The parts of the ``Source:`` line, in order (fields already safe)."""
    actor, event, head = field_safe(msg.actor), field_safe(msg.event), field_safe(msg.head_sha)
    src = []
    if msg.follow_up_run_id != 0:
        src.append(f"follow-up run {msg.follow_up_run_id}")
    if event and actor:
        src.append(f"{event} by {actor}")
    elif event:
        src.append(event)
    elif actor:
        src.append(f"by {actor}")
    if msg.created_at is not None:
        src.append(f"at {format_time(msg.created_at)}")
    if head:
        src.append(f"head is now {head}")
    return src or [SOURCE_NONE]


def _authority_paragraph(msg: SteerMessage, wording: Wording) -> str:
    """Second paragraph: delivery sentence plus the authority statement that fits the message."""
    actor, event = field_safe(msg.actor), field_safe(msg.event)
    if msg.follow_up_run_id == 0:
        second = wording.no_authority
    elif actor and event in AMENDMENT_EVENTS:
        second = wording.authority(actor, event)
    else:
        second = wording.authorized_run
    return wording.delivery + " " + second + "\n\n"


def render_envelope(msg: SteerMessage, wording: Wording) -> str:
    """Wrap ``msg.text`` in the v1 envelope.

    Starts with :data:`OPENING_LINE` and a blank line; exactly one line starts ``Source: ``; ends
    with ``msg.text`` verbatim.  A local run (``follow_up_run_id == 0``) gets the no-authority
    sentence and the ``Source:`` item ``the work item this run is acting on`` when nothing is known.
    """
    return (
        OPENING_LINE
        + "\n\n"
        + _authority_paragraph(msg, wording)
        + wording.no_new_powers
        + "\n\n"
        + SOURCE_PREFIX
        + ", ".join(source_items(msg))
        + "\n\n"
        + msg.text
    )
