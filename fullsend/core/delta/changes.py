"""The delta: what changed on the work item since the baseline (docs/architecture.md "Delta").

Pure.  The app reads the forge (comments since the baseline, the issue record, for a pull request
its head, reviews and — when :func:`needs_compare` says so — the comparison) into a
:class:`ForgeSnapshot`; :func:`build_delta` classifies it; :func:`fullsend.core.text.steertext.build_text`
renders it; :func:`advance` moves the baseline after a successful delivery.

Amendments are only comments bound to an authorized run (``bind_triggers`` of
``fullsend.core.provenance.binding``); everything else that is new and not own output is context.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from datetime import datetime

from fullsend.core.delta.headmove import head_move_context
from fullsend.core.delta.ownoutput import is_own_output
from fullsend.core.delta.records import (
    KIND_COMMENT,
    KIND_HEAD,
    KIND_REVIEW,
    KIND_SPOT,
    KIND_STATE,
    KIND_THREAD,
    BaselineState,
    Delta,
    DeltaItem,
    ForgeSnapshot,
    TextResult,
)
from fullsend.core.model import Comment, Issue
from fullsend.core.prose import Wording
from fullsend.core.provenance.binding import Authorization, bind_triggers, binding_time, command_instruction
from fullsend.core.wire import NO_COMMENT


def needs_compare(state: BaselineState, head_sha: str) -> bool:
    """Whether the app must call ``compare(state.last_head, head_sha)`` for this delta
    (docs/architecture.md "Head moves").

    True only for a pull request whose head moved from a known head; a move from an unknown head
    is reported without a comparison.
    """
    return state.is_pull_request and bool(head_sha) and bool(state.last_head) and head_sha != state.last_head


def diff_labels(old: Sequence[str], new: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(added, removed)`` label names, each sorted by code point."""
    old_set, new_set = set(old), set(new)
    return tuple(sorted(new_set - old_set)), tuple(sorted(old_set - new_set))


def to_second(at: datetime) -> datetime:
    """``at`` at GitHub's resolution: comments and reviews are stamped to the whole second."""
    return at.replace(microsecond=0)


def is_new(at: datetime | None, since: datetime) -> bool:
    """Created in ``since``'s second or later: compared at the forge's one-second
    resolution, inclusively, so a comment posted later in the second of a steer is not lost.
    What already reached the agent is excluded by id, not by time.  Unknown → not new."""
    return at is not None and to_second(at) >= to_second(since)


def eligible_comments(
    comments: Sequence[Comment],
    since: datetime,
    self_logins: AbstractSet[str],
    delivered: AbstractSet[int] = frozenset(),
    named: AbstractSet[int] = frozenset(),
) -> list[Comment]:
    """Comments created in ``since``'s second or later (:func:`is_new`) or ``named`` by an
    accepted follow-up run's title whatever their timestamp (run creation lags, so timestamps do
    not order runs; docs/architecture.md "Delta"), not in ``delivered`` and not own output,
    listing order.

    ``created_at`` decides for the rest (an old comment edited later is not new); unknown → dropped.
    """
    return [
        c
        for c in comments
        if (c.id in named or is_new(c.created_at, since))
        and c.id not in delivered
        and is_own_output(c.author, c.author_is_app, c.body, self_logins) is None
    ]


def _comment_items(
    eligible: list[Comment], auths: Sequence[Authorization], observed: Sequence[Authorization]
) -> tuple[list[DeltaItem], list[DeltaItem], tuple[int, ...]]:
    """Split eligible comments into amendments and context by binding
    (docs/architecture.md "Amendments and context").  All of one kind: issue comments with
    comment runs, or review-thread comments with thread runs (their ids are other series)."""
    binding = bind_triggers(eligible, auths, observed)
    amendments, context = [], []
    for c in eligible:
        run_ids = tuple(binding.by_comment.get(c.id, ()))
        kind = KIND_THREAD if c.in_thread else KIND_COMMENT
        item = DeltaItem(kind, c.body, author=c.author, at=binding_time(c), id=c.id, path=c.path, line=c.line)
        if run_ids:
            amendments.append(replace(item, run_ids=run_ids, instruction=command_instruction(c.body)))
        else:
            context.append(item)
    return amendments, context, binding.unbound


def _thread_items(
    state: BaselineState,
    snap: ForgeSnapshot,
    auths: Sequence[Authorization],
    observed: Sequence[Authorization],
    self_logins: AbstractSet[str],
) -> tuple[list[DeltaItem], list[DeltaItem], tuple[int, ...]]:
    """Review-thread comments as :func:`_comment_items` does comments, with thread runs only;
    each thread amendment adds a context note of where it was written (its file and line reach
    the agent fenced, sanitized and defanged, never as an instruction)."""
    mine = [a for a in auths if a.in_thread]
    named = frozenset(a.comment_id for a in mine if a.comment_id > 0)
    threads = [c for c in snap.thread_comments if c.in_thread]
    eligible = eligible_comments(threads, state.since, self_logins, state.delivered_thread_ids, named)
    amendments, context, unbound = _comment_items(eligible, mine, [a for a in observed if a.in_thread])
    spots = [DeltaItem(KIND_SPOT, "", author=a.author, path=a.path, line=a.line) for a in amendments]
    return amendments, context + spots, unbound


def _review_items(state: BaselineState, snap: ForgeSnapshot, self_logins: AbstractSet[str]) -> list[DeltaItem]:
    """New reviews, not own output, as context; a blank body reads ``(no comment)``."""
    items = []
    for r in snap.reviews:
        if not is_new(r.submitted_at, state.since) or r.id in state.delivered_review_ids:
            continue
        if is_own_output(r.author, r.author_is_app, r.body, self_logins) is not None:
            continue
        body = r.body if r.body.strip() else NO_COMMENT
        items.append(DeltaItem(KIND_REVIEW, body, author=r.author, state=r.state, at=r.submitted_at, id=r.id))
    return items


def _labels_item(old: Sequence[str], issue: Issue | None, wording: Wording) -> list[DeltaItem]:
    """The label change state item, if the label set changed."""
    if issue is None:
        return []
    added, removed = diff_labels(old, issue.labels)
    if not added and not removed:
        return []
    return [DeltaItem(KIND_STATE, wording.labels_changed(added, removed))]


def _issue_state_items(state: BaselineState, issue: Issue | None, wording: Wording) -> list[DeltaItem]:
    """Title, body and label edits of an issue, in that order."""
    if issue is None:
        return []
    items = []
    if issue.title != state.title:
        items.append(DeltaItem(KIND_STATE, wording.title_item(issue.title)))
    if issue.body != state.body:
        items.append(DeltaItem(KIND_STATE, wording.body_edited + "\n" + issue.body))
    return items + _labels_item(state.labels, issue, wording)


def build_delta(
    state: BaselineState,
    snap: ForgeSnapshot,
    auths: Sequence[Authorization],
    observed: Sequence[Authorization],
    self_logins: AbstractSet[str],
    wording: Wording,
) -> Delta:
    """Classify what the app read against the baseline.

    ``auths``: ``binding.authorizations(batch)``; ``observed``: ``binding.observed_authorizations``
    over every recorded amendment-event run.  Context order: PR → head (first), comments,
    review-thread comments (then where each thread instruction was written), reviews, labels;
    issue → comments, then title, body, labels.  Never raises on bad forge data.
    """
    issue_auths = [a for a in auths if not a.in_thread]
    named = frozenset(a.comment_id for a in issue_auths if a.comment_id > 0)
    eligible = eligible_comments(snap.comments, state.since, self_logins, state.delivered_comment_ids, named)
    issue_observed = [a for a in observed if not a.in_thread]
    amendments, comments, unbound = _comment_items(eligible, issue_auths, issue_observed)
    if not state.is_pull_request:
        context = comments + _issue_state_items(state, snap.issue, wording)
        return Delta(tuple(amendments), tuple(context), unbound, issue=snap.issue)
    moved = bool(snap.head_sha) and snap.head_sha != state.last_head
    head: list[DeltaItem] = []
    if moved:
        body = head_move_context(state.last_head, snap.head_sha, snap.comparison, snap.compare_error, wording)
        head.append(DeltaItem(KIND_HEAD, body))
    in_thread, threads, thread_unbound = _thread_items(state, snap, auths, observed, self_logins)
    reviews = _review_items(state, snap, self_logins)
    context = head + comments + threads + reviews + _labels_item(state.labels, snap.issue, wording)
    return Delta(
        tuple(amendments + in_thread),
        tuple(context),
        tuple(sorted({*unbound, *thread_unbound})),
        head_moved=moved,
        new_head=snap.head_sha if moved else "",
        last_head=state.last_head,
        issue=snap.issue,
    )


def advance(state: BaselineState, delta: Delta, text: TextResult, snapshot: datetime) -> BaselineState:
    """The baseline after a successful delivery.

    ``since`` ← ``snapshot`` (the instant taken just before the delta was built); the delta's
    comments and reviews join the delivered ids, so the next delta, which opens at that
    instant's second, never carries them twice.  The content snapshot takes the delta's issue
    record unless the clip reached a state item; ``last_head`` takes the new head unless the
    clip reached the head item (the next delta reports it again).
    """
    labels, title, body = state.labels, state.title, state.body
    if delta.issue is not None and not text.state_clipped:
        labels, title, body = delta.issue.labels, delta.issue.title, delta.issue.body
    last_head = state.last_head
    if delta.head_moved and not text.head_clipped:
        last_head = delta.new_head
    return BaselineState(
        snapshot,
        state.is_pull_request,
        last_head,
        tuple(labels),
        title,
        body,
        state.delivered_comment_ids | delta.comment_ids,
        state.delivered_review_ids | delta.review_ids,
        state.delivered_thread_ids | delta.thread_ids,
    )
