"""The project's own sentences, as a frozen record the pure core receives as a parameter.

The sentences themselves are jinja2 templates under ``fullsend/templates/envelope/``, rendered by
``fullsend.wording.default_wording()`` (outside the core, which never imports jinja2).  Every
string and every callable result is ONE line of prose (no line break) that never begins with a
structural token (spec/watcher.md §10.2, §10.6); the bracketed descriptions of
spec/watcher.md §9.3-§9.5, §10.2 and §10.7 say what each one must say.

Tests build their own ``Wording`` only to probe structure; production uses the default one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class Wording:
    """Sentences of the steer text (watcher §9-§10) and of the envelope (runtime-transport §5).

    Callables take already-formatted values (SHAs, logins with ``@``, label names) and return one
    line.  Field groups: steer-text header (§10.2), context header, head move (§9.5), state items
    (§9.3-§9.4) and envelope paragraphs (§10.7).
    """

    # spec/watcher.md §10.2 items 1-3 and the context header of OPEN
    trigger_line: Callable[[Sequence[int], Sequence[str]], str]  # (run ids, distinct events)
    guide_amendments: Callable[[Sequence[str]], str]  # (["@login", …] sorted)
    guide_context_only: str
    head_moved_notice: Callable[[str, str], str]  # (new head, last head)
    context_header: str
    # spec/watcher.md §9.5
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
    # spec/watcher.md §9.3-§9.4
    title_item: Callable[[str], str]  # (new title, ends the line verbatim)
    body_edited: str
    labels_changed: Callable[[Sequence[str], Sequence[str]], str]  # (added, removed), sorted
    # spec/runtime-transport.md §5 / spec/watcher.md §10.7
    delivery: str
    no_authority: str
    authority: Callable[[str, str], str]  # (actor, event; event may be "")
    authorized_run: str
    no_new_powers: str
