"""The text handed to the runtime (``build_text(batch, delta)``, docs/architecture.md "Steer text").

Layout (``\\n`` = newline; bracketed parts are our prose, one line each):

    [trigger line]\\n
    \\n[reading guide]\\n
    (\\n[head-moved notice]\\n)?
    (\\nAmendments\\n\\n <amendment renders>)?          -- authorized text, verbatim
    (\\nWork-item context. [context header]\\n\\n[work-item-context]\\n <defanged context>
     \\n[/work-item-context]\\n)?

Budgets are UTF-8 bytes: 16,384 for the whole body, 4,096 per amendment.  Header and amendments
are sanitized on their own; the context is sanitized, then defanged, then clipped; nothing is
scanned again after assembly.  A clip decides what counts as consumed and which snapshot parts
advance (docs/architecture.md "Poll-and-steer cycle").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fullsend.core.delta.records import (
    KIND_HEAD,
    KIND_REVIEW,
    KIND_SPOT,
    KIND_STATE,
    KIND_THREAD,
    Delta,
    DeltaItem,
    TextResult,
)
from fullsend.core.model import WorkflowRun
from fullsend.core.prose import Wording
from fullsend.core.text.defang import defang_context, reveals_token
from fullsend.core.text.sanitize import sanitize_agent_text
from fullsend.core.wire import (
    AMENDMENTS_HEADING,
    COMMENT_PREFIX,
    CONTEXT_HEADING,
    FENCE_CLOSE,
    FENCE_OPEN,
    INSTRUCTION_PREFIX,
    MAX_AMENDMENT_BYTES,
    MAX_DELTA_BYTES,
    REVIEW_PREFIX,
    THREAD_PREFIX,
    THREAD_SPOT_PREFIX,
    TRUNCATION_MARKER,
)

# A file path is untrusted and may hold any character but "/" and NUL: on our one line it loses
# its line breaks and other controls before the whole context is sanitized and defanged.
_PATH_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]+")


def _utf8_len(s: str) -> int:
    return len(s.encode("utf-8"))


def truncate(s: str, max_bytes: int) -> tuple[str, bool]:
    """``(text, clipped)``: ``s`` cut to ``max_bytes`` UTF-8 bytes plus ``\\n[truncated]``.

    ``max_bytes <= 0`` → ``("", s != "")``; fits → ``(s, False)``; otherwise the cut backs off to
    a code-point boundary and the 12-byte marker is appended (so the result may exceed
    ``max_bytes`` by 12).
    """
    if max_bytes <= 0:
        return "", s != ""
    raw = s.encode("utf-8")
    if len(raw) <= max_bytes:
        return s, False
    return raw[:max_bytes].decode("utf-8", errors="ignore") + TRUNCATION_MARKER, True


def context_open(wording: Wording) -> str:
    """``OPEN``: the context heading line, a blank line and the opening fence."""
    return "\n" + CONTEXT_HEADING + " " + wording.context_header + "\n\n" + FENCE_OPEN + "\n"


CONTEXT_CLOSE = "\n" + FENCE_CLOSE + "\n"


def _header(batch: Sequence[WorkflowRun], delta: Delta, wording: Wording) -> str:
    """Trigger line, reading guide and head-moved notice."""
    events = sorted({r.event for r in batch if r.event})
    out = wording.trigger_line([r.id for r in batch], events) + "\n"
    authors = sorted({a.author for a in delta.amendments if a.author})
    if authors:
        out += "\n" + wording.guide_amendments(["@" + a for a in authors]) + "\n"
    else:
        out += "\n" + wording.guide_context_only + "\n"
    if delta.head_moved:
        out += "\n" + wording.head_moved_notice(delta.new_head, delta.last_head) + "\n"
    return out


def render_amendment(item: DeltaItem) -> tuple[str, bool]:
    """One amendment and whether it was clipped; amendments are not defanged."""
    if item.instruction:
        text, clipped = truncate(item.instruction, MAX_AMENDMENT_BYTES)
        return f"{INSTRUCTION_PREFIX}{item.author}: {text}\n\n", clipped
    if item.kind == KIND_REVIEW:
        return f"{REVIEW_PREFIX}{item.author} ({item.state}):\n{item.body}\n\n", False
    body, clipped = truncate(item.body, MAX_AMENDMENT_BYTES)
    return f"{COMMENT_PREFIX}{item.author}:\n{body}\n\n", clipped


def thread_place(item: DeltaItem) -> str:
    """Where a review-thread comment sits: ``"src/app.py, line 12"`` (``line`` 0: the path
    alone), the path on one line."""
    path = _PATH_BREAKS.sub(" ", item.path).strip() or "?"
    return f"{path}, line {item.line}" if item.line > 0 else path


def render_context_item(item: DeltaItem) -> str:
    """One context item before sanitizing and defanging."""
    if item.kind == KIND_THREAD:
        return f"{THREAD_PREFIX}{item.author} on {thread_place(item)}:\n{item.body}\n\n"
    if item.kind == KIND_SPOT:
        return f"{THREAD_SPOT_PREFIX}{item.author} was written on {thread_place(item)}.\n\n"
    if item.kind == KIND_REVIEW:
        return f"{REVIEW_PREFIX}{item.author} ({item.state}):\n{item.body}\n\n"
    if item.kind in (KIND_STATE, KIND_HEAD):
        return item.body + "\n\n"
    return f"{COMMENT_PREFIX}{item.author}:\n{item.body}\n\n"


def _amendments(delta: Delta, budget_bytes: int) -> tuple[str, set[int]]:
    """Rendered amendments within the budget and the run ids they exclude."""
    excluded = set(delta.unbound)
    kept: list[str] = []
    size, dropping = 0, False
    for item in delta.amendments:
        rendered, clipped = render_amendment(item)
        n = _utf8_len(rendered)
        if dropping or size + n > budget_bytes:
            dropping = True  # this one and every later one
            excluded.update(item.run_ids)
            continue
        kept.append(rendered)
        size += n
        if clipped:
            excluded.update(item.run_ids)  # delivered but incomplete: never receipted
    if not kept:
        return "", excluded
    return "\n" + AMENDMENTS_HEADING + "\n\n" + "".join(kept), excluded


def clip_context(body: str, remaining_bytes: int) -> tuple[str, bool]:
    """:func:`truncate` for the defanged context, keeping the clip from forging a token.

    A cut can turn a harmless line into one that reads as a structural token (``Amendments are
    in`` cut after ``Amendments``).  When the partial last line before the marker would be altered
    by defanging, it is dropped whole (the result only gets shorter).
    """
    cut, clipped = truncate(body, remaining_bytes)
    if not clipped or not cut:
        return cut, clipped
    kept = cut[: -len(TRUNCATION_MARKER)]
    start = kept.rfind("\n") + 1
    if reveals_token(kept[start:]):
        kept = kept[:start]
    return kept + TRUNCATION_MARKER, True


def _defanged(rendered: str) -> tuple[str, int]:
    sanitized, findings = sanitize_agent_text(rendered)
    return defang_context(sanitized), findings


def build_text(batch: Sequence[WorkflowRun], delta: Delta, wording: Wording) -> TextResult:
    """Render the delta for the runtime.

    ``batch``: the accepted runs, oldest first (all named in the trigger line).  Returns the body
    (without the envelope opening line), sanitizer findings, the excluded run ids (unbound ∪
    dropped ∪ clipped amendments) and the state/head clip flags.
    """
    header = _header(batch, delta, wording)
    amendments, excluded = _amendments(delta, MAX_DELTA_BYTES - _utf8_len(header))
    text, findings = sanitize_agent_text(header + amendments)
    if not delta.context:
        return TextResult(text, findings, frozenset(excluded))
    body, more = _defanged("".join(render_context_item(i) for i in delta.context))
    opening = context_open(wording)
    remaining = MAX_DELTA_BYTES - _utf8_len(text) - _utf8_len(opening) - _utf8_len(CONTEXT_CLOSE)
    body, clipped = clip_context(body, remaining)
    state_clipped = clipped and any(i.kind == KIND_STATE for i in delta.context)
    head_clipped = False
    if clipped and delta.context[0].kind == KIND_HEAD:
        head_clipped = remaining < _utf8_len(_defanged(render_context_item(delta.context[0]))[0])
    return TextResult(
        text + opening + body + CONTEXT_CLOSE, findings + more, frozenset(excluded), state_clipped, head_clipped
    )
