"""The project's own sentences, as a frozen record the pure core receives as a parameter.

The sentences themselves are jinja2 templates under ``fullsend/templates/envelope/``, rendered by
``fullsend.wording.default_wording()`` (outside the core, which never imports jinja2).  Every
string and every callable result is ONE line of prose (no line break) that never begins with a
structural token (docs/architecture.md "Defanging"); the templates' comments say what each one
must say.

Tests build their own ``Wording`` only to probe structure; production uses the default one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Wording:
    """Sentences of the steer text and of the envelope.

    Callables take already-formatted values (SHAs, logins with ``@``, label names) and return one
    line.  Field groups: steer-text header, context header, head move, state items and envelope
    paragraphs.
    """

    # the steer-text header (docs/architecture.md "Steer text") and the context header of OPEN
    trigger_line: Callable[[Sequence[int], Sequence[str]], str]  # (run ids, distinct events)
    guide_amendments: Callable[[Sequence[str]], str]  # (["@login", …] sorted)
    guide_context_only: str
    head_moved_notice: Callable[[str, str], str]  # (new head, last head)
    context_header: str
    # the head move (docs/architecture.md "Head moves")
    head_move: Callable[[str, str], str]  # (old, new)
    unreadable: Callable[[str], str]  # (reason)
    reason_no_previous_head: str
    reason_not_found: str
    reason_not_supported: str
    reason_compare_error: str
    reason_status: Callable[[str], str]  # (compare status)
    reason_file_cap: str
    reason_list_too_long: Callable[[int], str]  # (number of files)
    no_change: str
    count_line: Callable[[int, int], str]  # (files, ahead_by)
    patch_trailer: Callable[[int, int], str]  # (shown, files with a patch)
    # state items of an issue and labels (docs/architecture.md "Delta")
    title_item: Callable[[str], str]  # (new title, ends the line verbatim)
    body_edited: str
    labels_changed: Callable[[Sequence[str], Sequence[str]], str]  # (added, removed), sorted
    # envelope paragraphs (docs/architecture.md "Envelope")
    delivery: str
    no_authority: str
    authority: Callable[[str, str], str]  # (actor, event; event may be "")
    authorized_run: str
    no_new_powers: str
