"""What a head move tells the agent (``head_move_context``, docs/architecture.md "Head moves").

The change between the head the agent was last told about and the new head is shown only when
the comparison is complete: status ``ahead`` and fewer than :data:`COMPARE_FILE_CAP` files.
Every other case (no old head, a forge error, a force-push, a listing at the cap, a file list
longer than the budget) is reported as a move that could not be read, and the agent is sent to
the pull request itself.  Patches are added whole, file by file, within
:data:`MAX_HEAD_MOVE_BYTES`; the cut is stated.  Raw forge error text is never shown.
"""

from __future__ import annotations

from fullsend.core.model import CompareFile, Comparison
from fullsend.core.prose import Wording
from fullsend.core.wire import COMPARE_FILE_CAP, MAX_HEAD_MOVE_BYTES

#: ``compare_error`` values the app passes in (anything else counts as ``error``).
COMPARE_NOT_FOUND = "not-found"
COMPARE_NOT_SUPPORTED = "not-supported"
COMPARE_ERROR = "error"

_RENAMES = ("renamed", "copied")


def _utf8_len(s: str) -> int:
    return len(s.encode("utf-8"))


def _file_line(f: CompareFile) -> str:
    """``- <path> (<status>[ from <previous>], +<add> -<del>)\\n`` (exact layout)."""
    if f.status in _RENAMES and f.previous_filename and f.previous_filename != f.filename:
        return f"- {f.filename} ({f.status} from {f.previous_filename}, +{f.additions} -{f.deletions})\n"
    return f"- {f.filename} ({f.status}, +{f.additions} -{f.deletions})\n"


def _error_reason(compare_error: str, wording: Wording) -> str:
    if compare_error == COMPARE_NOT_FOUND:
        return wording.reason_not_found
    if compare_error == COMPARE_NOT_SUPPORTED:
        return wording.reason_not_supported
    return wording.reason_compare_error


def _with_patches(prefix: str, files: tuple[CompareFile, ...], wording: Wording) -> str:
    """Append whole patches in file order until the next would pass the budget."""
    parts, size = [prefix], _utf8_len(prefix)
    with_patch = [f for f in files if f.patch]
    shown = 0
    for f in with_patch:
        hunk = f"\n--- {f.filename}\n{f.patch}\n"
        hunk_bytes = _utf8_len(hunk)
        if size + hunk_bytes > MAX_HEAD_MOVE_BYTES:
            break  # no skipping ahead to a smaller patch
        parts.append(hunk)
        size += hunk_bytes
        shown += 1
    if shown < len(with_patch):
        parts.append("\n" + wording.patch_trailer(shown, len(with_patch)) + "\n")
    return "".join(parts)


def head_move_context(old: str, new: str, comparison: Comparison | None, compare_error: str, wording: Wording) -> str:
    """The body of the ``head`` context item for a move from ``old`` to ``new``.

    ``comparison`` is ``GET …/compare/{old}...{new}`` as read by the app, or ``None`` when it was
    not read; ``compare_error`` is ``"not-found"`` (404), ``"not-supported"``, ``"error"`` or ``""``.
    Returns one string of at most 6,144 bytes, plus the patch trailer when patches were cut.  The
    unreadable form has no trailing newline.
    """
    prefix = wording.head_move(old, new)

    def unreadable(reason: str) -> str:
        return prefix + " " + wording.unreadable(reason)

    if not old:
        return unreadable(wording.reason_no_previous_head)
    if compare_error or comparison is None:
        return unreadable(_error_reason(compare_error or COMPARE_ERROR, wording))
    if comparison.status != "ahead":
        return unreadable(wording.reason_status(comparison.status))
    files = comparison.files
    if len(files) >= COMPARE_FILE_CAP:
        return unreadable(wording.reason_file_cap)
    if not files:
        return prefix + " " + wording.no_change
    listing = " " + wording.count_line(len(files), comparison.ahead_by) + "\n"
    listing += "".join(_file_line(f) for f in files)
    if _utf8_len(prefix) + _utf8_len(listing) > MAX_HEAD_MOVE_BYTES:
        return unreadable(wording.reason_list_too_long(len(files)))
    return _with_patches(prefix + listing, files, wording)
