"""The records ``fullsend explain`` prints: what it read, and every decision with its rule id.

Shapes only.  ``explain_judge`` and ``explain_comments`` fill them with the verdicts of the real
``fullsend.core`` functions; ``explain_render`` prints them as text or as one JSON document
(``dataclasses.asdict`` of :class:`Explanation`).  Times are RFC 3339 UTC strings ("" = unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Outcomes of one provenance check in a run's check table (docs/architecture.md "Provenance").
PASS, ACCEPT, REJECT_FINAL, PENDING, NOT_REACHED, NOT_KNOWN = (
    "pass",
    "accept",
    "reject-final",
    "pending",
    "not-reached",
    "not-known",
)


@dataclass(frozen=True)
class CallReport:
    """One API call explain made: ``call`` (``"GET /repos/o/r/issues/7"``), whether it worked,
    the HTTP ``status`` (``None`` for network errors) and, on failure, what went wrong and the
    probable cause (for a 403: which permission the token lacks)."""

    call: str
    ok: bool
    status: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class CheckReport:
    """One provenance check of one run: ``check`` (``self``, ``shim``, ``event``, ``fresh``,
    ``item``, ``chain``, ``once``, ``jobs``, ``route``, ``stage``), its ``outcome`` (one of the
    constants above), the rule id when it decided (docs/rules.md) and the detail."""

    check: str
    outcome: str
    rule_id: str = ""
    detail: str = ""


@dataclass(frozen=True)
class SkipReport:
    """Whether a pre-flight skip rule would apply to a queued run with this run id.

    ``rule_id`` is ``receipt-lists-my-run`` or ``head-reviewed``
    (docs/architecture.md "Pre-flight skips"); ``applies`` says whether it would skip;
    ``reason`` says why in the project's words.  For the receipt rule, ``comment_id`` /
    ``author`` / ``edited`` name the receipt comment that decided (0 / "" / False when none).
    """

    rule_id: str
    applies: bool
    reason: str
    comment_id: int = 0
    author: str = ""
    edited: bool = False


@dataclass(frozen=True)
class RunEndReport:
    """How a finished run's agent ended, as its terminal status comment says: the run id, the
    comment and its author, and the rule a failed end broke (``""``: none was named, the agent's
    end was success or no agent ran; docs/rules.md "Agent end").  ``by_app``: written by an App,
    as the action writes it under the role token (anyone else's is only shown)."""

    run_id: str
    comment_id: int
    author: str
    rule_id: str = ""
    by_app: bool = False


@dataclass(frozen=True)
class RunReport:
    """One shim run: the run in flight, a follow-up it judges, or a run of the item.

    ``role``: ``in-flight``, ``follow-up`` or ``item-run``.  ``outcome`` / ``rule_id`` /
    ``check`` / ``detail``: the deciding provenance verdict (follow-ups only; "" otherwise).
    ``checks``: every check in the watcher's order.  ``amendments``: ids of the comments bound
    to this run; ``unbound``: an authorized run bound to no comment (never consumed;
    docs/architecture.md "Amendments and context").
    ``receipt`` / ``head_reviewed``: the two pre-flight skip rules for a queued run with this id.
    """

    run_id: int
    role: str
    event: str = ""
    actor: str = ""
    created_at: str = ""
    status: str = ""
    display_title: str = ""
    run_attempt: int = 0
    html_url: str = ""
    outcome: str = ""
    rule_id: str = ""
    check: str = ""
    detail: str = ""
    checks: tuple[CheckReport, ...] = ()
    amendments: tuple[int, ...] = ()
    unbound: bool = False
    receipt: SkipReport | None = None
    head_reviewed: SkipReport | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommentReport:
    """One comment on the item, as the run in flight's delta would classify it
    (docs/architecture.md "Amendments and context").

    ``kind``: ``own-output`` (``rule_id`` ``self-login`` or ``app-marker``), ``before-baseline``
    (created before the run in flight: part of its task, not of a steer), ``amendment`` (bound to
    ``run_ids``; ``instruction`` is what the agent is told to do) or ``context``.  ``edited`` is
    true when ``updated_at`` differs from ``created_at``; ``why`` explains the classification.
    """

    comment_id: int
    author: str
    author_type: str
    created_at: str
    updated_at: str
    edited: bool
    kind: str
    rule_id: str = ""
    run_ids: tuple[int, ...] = ()
    instruction: str = ""
    why: str = ""


@dataclass(frozen=True)
class ReceiptReport:
    """A comment whose whole body is a steer receipt (docs/architecture.md "Receipt reader").

    ``counts`` is false when it can never make a run skip: edited or not written by an
    App.  ``consumed``: the run ids it lists; ``head``: the head it names ("" for issues).
    """

    comment_id: int
    author: str
    author_type: str
    edited: bool
    counts: bool
    consumed: tuple[int, ...]
    head: str = ""


@dataclass(frozen=True)
class ItemReport:
    """The work item: ``kind`` is ``pull-request``, ``issue`` or ``unknown`` (its reads failed)."""

    repository: str
    number: int
    kind: str = "unknown"
    title: str = ""
    head_sha: str = ""
    html_url: str = ""


@dataclass(frozen=True)
class Explanation:
    """Everything ``fullsend explain`` prints, as one document.

    ``as_of``: the ``--as-of`` instant ("" = now).  ``reader``: the login the token reads as.
    ``in_flight``: the run in flight or the ``--run`` run (``None`` with ``in_flight_note``
    saying why); ``route_job`` / ``stage_job`` / ``baseline`` / ``run_name``: the facts its Start
    fixed (docs/architecture.md "Start").  ``follow_ups``: the shim runs it judges, oldest first.
    ``item_runs``: the item's shim runs, newest first (when no run is in flight).
    ``run_ends``: each finished run's end, from its terminal status comment.
    ``limits``: what explain cannot see through the API.
    """

    item: ItemReport
    as_of: str = ""
    reader: str = ""
    in_flight: RunReport | None = None
    in_flight_note: str = ""
    route_job: str = ""
    stage_job: str = ""
    baseline: str = ""
    run_name: str = ""
    start_notes: tuple[str, ...] = ()
    follow_ups: tuple[RunReport, ...] = ()
    item_runs: tuple[RunReport, ...] = ()
    comments: tuple[CommentReport, ...] = ()
    receipts: tuple[ReceiptReport, ...] = ()
    run_ends: tuple[RunEndReport, ...] = ()
    self_logins: tuple[str, ...] = ()
    calls: tuple[CallReport, ...] = ()
    limits: tuple[str, ...] = field(default_factory=tuple)
