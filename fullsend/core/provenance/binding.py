"""Work-item binding and amendment binding (docs/architecture.md "Binding", "Amendments and context").

Three questions, all answered from server-side records only:

* Is a follow-up run bound to my work item (`item` check)?  ``pull_requests[]`` decides alone
  when it is non-empty; otherwise the run's ``display_title`` must be contract-shaped (the shim's
  run-name, WIRE ``owner/repo#N`` with an optional `` comment:<id>`` suffix) and name my item.
  Nothing is ever guessed from ``head_sha`` or a branch name.
* Which accepted runs confer amendment authority, and through whom?  Only
  ``issue_comment`` runs on ``run_attempt == 1``, through ``actor`` (never ``triggering_actor``).
* Which comment did each authorized run carry?  Exact comment-id naming first, then
  per-login interval pairing within :data:`MAX_DISPATCH_LAG`; bursts and inversions bind nothing;
  a comment edited after its run was created loses its authority.

Every function is total: bad forge data (unknown times, empty logins, odd titles) never raises, it
simply binds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.scalars import decimal_id
from fullsend.core.wire import AMENDMENT_EVENTS, THREAD_EVENT  # the single source

#: Interval pairing window (inclusive).
MAX_DISPATCH_LAG = timedelta(minutes=10)


# The run-name contract: `^(?P<item>\S+#[1-9][0-9]*)( comment:(?P<id>[1-9][0-9]*))?$`, with Go's ASCII `\S`
# (not one of [\t\n\f\r ]).  Used with fullmatch, so a trailing "\n" is not forgiven.
# A review-thread comment's run ends in ` review_comment:<id>` instead (docs/adopting.md "The
# run-name contract"): another id series, so it never names an issue comment.
_TITLE = re.compile(r"(?P<item>[^\t\n\f\r ]+#[1-9][0-9]*)(?: (?P<kind>comment|review_comment):(?P<id>[1-9][0-9]*))?")

# The stage-command shape, checked after lowercasing and trimming trailing punctuation.
_STAGE_COMMAND = re.compile(r"/fs-[a-z0-9-]+")
_COMMAND_TRAILERS = ".,;:!?"

# Unicode White_Space, as Go's unicode.IsSpace sees it (strings.Fields / strings.TrimSpace).
# Python's str.split() also splits on U+001C-U+001F, which Go does not.
_GO_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_GO_SPACE_STR = "".join(sorted(_GO_SPACE))
_FIELD = re.compile(f"[^{re.escape(_GO_SPACE_STR)}]+")


def _parse(display_title: object) -> tuple[str, str, int] | None:
    """(work-item half, ``comment`` / ``review_comment`` / ``""``, id or 0), or ``None``."""
    if not isinstance(display_title, str):
        return None
    m = _TITLE.fullmatch(display_title)
    if m is None:
        return None
    comment_id = decimal_id(m.group("id")) if m.group("id") else 0
    if m.group("id") and comment_id == 0:  # beyond 64 bits (never int() on thousands of digits)
        return None
    return m.group("item"), m.group("kind") or "", comment_id


def parse_title(display_title: str) -> tuple[str, int] | None:
    """Split a contract-shaped run title into (work-item half, issue comment id or 0).

    ``"acme/widgets#7 comment:12"`` → ``("acme/widgets#7", 12)``; ``"acme/widgets#7"`` and
    ``"acme/widgets#7 review_comment:12"`` → ``("acme/widgets#7", 0)`` (a review comment's id is
    no issue comment's: :func:`review_comment_id`).  Anything not exactly contract-shaped (an extra
    word, two spaces, ``Comment:``, a hex or zero id, an id beyond 64 bits, a non-string) →
    ``None``: it binds nothing.
    """
    parsed = _parse(display_title)
    if parsed is None:
        return None
    item, kind, comment_id = parsed
    return item, comment_id if kind == "comment" else 0


def review_comment_id(display_title: str) -> int:
    """The review comment a contract-shaped title names (`` review_comment:<id>``), else 0."""
    parsed = _parse(display_title)
    return parsed[2] if parsed is not None and parsed[1] == "review_comment" else 0


def bound_to_item(run: WorkflowRun, item_number: int, run_name: str) -> bool:
    """True when ``run`` belongs to my work item (`item` check).

    A non-empty ``pull_requests[]`` is the whole verdict (bound iff it holds ``item_number``).
    Otherwise the title's work-item half must equal ``run_name`` exactly (case-sensitive); an empty
    ``run_name`` means title binding is off (Start switched it off), so such runs never bind.
    """
    if run.pull_requests:
        return item_number in run.pull_requests
    if not run_name:
        return False
    parsed = parse_title(run.display_title)
    return parsed is not None and parsed[0] == run_name


def _first_field(body: str) -> str:
    """The first whitespace-separated field of the body's first line ("" if none)."""
    first_line = re.split(r"[\r\n]", body, maxsplit=1)[0]
    m = _FIELD.search(first_line)
    return m.group(0) if m else ""


def is_stage_command(token: str) -> bool:
    """True when one field is a stage command by SHAPE.

    Trailing ``.,;:!?`` are dropped and the rest lowercased; it must then be ``/fs-`` plus one or
    more of ``[a-z0-9-]``: ``/fs-fix:`` and ``/FS-Fix`` count, ``/fs-`` and ``/fs-fix/x`` do not.
    """
    # U+0130 lowercases to a single "i" in Go (simple case mapping); Python gives two code points.
    folded = token.rstrip(_COMMAND_TRAILERS).replace("\u0130", "i").lower()
    return _STAGE_COMMAND.fullmatch(folded) is not None


def opens_with_stage_command(body: str) -> bool:
    """True when the first field of the body's first line is a stage command.

    A command on a later line or mid-sentence does not count; a blank first line never does.
    """
    if not isinstance(body, str):
        return False
    field = _first_field(body)
    return bool(field) and is_stage_command(field)


def command_instruction(body: str, kind: str = "comment") -> str:
    """The instruction a command comment carries.

    ``"/fs-fix: do X"`` → ``"do X"``; ``"/fs-fix"`` → ``""``; a body that does not open with a
    stage command → ``""`` (the comment then renders as a plain amendment body).  The first field
    is removed exactly as written.  Any ``kind`` but ``"comment"`` (a review) → ``""``.
    """
    if kind != "comment" or not opens_with_stage_command(body):
        return ""
    field = _first_field(body)
    trimmed = body.strip(_GO_SPACE_STR)
    if trimmed.startswith(field):
        trimmed = trimmed[len(field) :]
    return trimmed.strip(_GO_SPACE_STR)


@dataclass(frozen=True)
class Authorization:
    """One issue_comment run as a pairing record.

    ``until`` is the run's ``created_at`` (UTC; ``None`` when unknown, which covers nothing);
    ``comment_id`` is the title's ``comment:<id>`` (0 when not named); ``login`` is the run's
    ``actor`` lowercased.  ``in_thread``: a review-thread comment's run, whose ``comment_id`` is
    the title's ``review_comment:<id>`` and which pairs only with review-thread comments.
    """

    run_id: int
    until: datetime | None
    comment_id: int
    login: str
    in_thread: bool = False

    def covers(self, at: datetime | None) -> bool:
        """True when ``at`` is known and not after ``until`` (both instants must be known)."""
        return at is not None and self.until is not None and at <= self.until


def _as_authorization(run: WorkflowRun) -> Authorization | None:
    login = run.actor.strip().lower() if isinstance(run.actor, str) else ""
    if run.event not in AMENDMENT_EVENTS or not login:
        return None
    if run.event == THREAD_EVENT:
        return Authorization(run.id, run.created_at, review_comment_id(run.display_title), login, in_thread=True)
    parsed = parse_title(run.display_title)
    return Authorization(run.id, run.created_at, parsed[1] if parsed else 0, login)


def authorizations(batch: Sequence[WorkflowRun]) -> list[Authorization]:
    """Amendment authority conferred by an accepted batch.

    Only ``issue_comment`` runs with ``run_attempt == 1`` exactly (0/unknown and re-runs confer
    nothing) and a non-empty ``actor`` count; ``triggering_actor`` is never read.  Batch order kept.
    """
    out = []
    for run in batch:
        auth = _as_authorization(run) if run.run_attempt == 1 else None
        if auth is not None:
            out.append(auth)
    return out


def observed_authorizations(observed: Iterable[WorkflowRun]) -> list[Authorization]:
    """Pairing records of every observed issue_comment run, accepted or refused.

    No attempt filter: a refused or re-run command still occupies its slot in the pairing.
    """
    out = []
    for run in observed:
        auth = _as_authorization(run)
        if auth is not None:
            out.append(auth)
    return out


@dataclass(frozen=True)
class Binding:
    """Result of :func:`bind_triggers`.

    ``by_comment`` maps a comment id to the authorized run ids bound to it (ascending): that
    comment is an amendment.  ``unbound`` lists the authorized run ids bound to no comment
    (ascending): they carried nothing under their authority and are never consumed.
    """

    by_comment: Mapping[int, tuple[int, ...]]
    unbound: tuple[int, ...]


def binding_time(comment: Comment) -> datetime | None:
    """``updated_at`` when it is after ``created_at``, else ``created_at``."""
    if comment.created_at is None:
        return None
    if comment.updated_at is not None and comment.updated_at > comment.created_at:
        return comment.updated_at
    return comment.created_at


def _sort_time(at: datetime | None) -> tuple[int, datetime | None]:
    # Unknown instants sort first.
    return (0, None) if at is None else (1, at)


def _login_runs(login: str, auths: Sequence[Authorization], observed: Sequence[Authorization]) -> list[Authorization]:
    """`runs(L)`: L's authorizations and observed runs, once each, by (``until``, ``run_id``)."""
    runs: dict[int, Authorization] = {}
    for rec in [*observed, *auths]:  # an authorization wins over its observed copy
        if rec.login == login:
            runs[rec.run_id] = rec
    return sorted(runs.values(), key=lambda r: (_sort_time(r.until), r.run_id))


_Candidate = tuple[datetime, Comment]


def _login_candidates(login: str, eligible: Sequence[Comment]) -> list[_Candidate]:
    """`cands(L)`: L's stage-command comments with a known ``created_at``, by (created_at, id)."""
    cands = [
        (c.created_at, c)
        for c in eligible
        if c.created_at is not None
        and isinstance(c.author, str)
        and c.author.strip().lower() == login
        and opens_with_stage_command(c.body)
    ]
    return sorted(cands, key=lambda pair: (pair[0], pair[1].id))


def _pair_runs(runs: list[Authorization], cands: list[_Candidate]) -> list[tuple[Comment, Authorization]]:
    """Pair runs with comments: the named tier, then the interval tier."""
    by_id = {c.id: c for _, c in cands}
    pairs: list[tuple[Comment, Authorization]] = []
    claimed: set[int] = set()
    for run in runs:
        if run.comment_id != 0 and run.comment_id in by_id:
            pairs.append((by_id[run.comment_id], run))
            claimed.add(run.comment_id)
    prev: datetime | None = None  # None = the zero time: before every known instant
    for run in runs:
        until = run.until
        if run.comment_id == 0 and until is not None:
            window = [c for at, c in cands if c.id not in claimed and (prev is None or prev < at) and at <= until]
            if len(window) == 1:
                pairs.append((window[0], run))
                claimed.add(window[0].id)
        prev = until
    return pairs


def _binds(comment: Comment, run: Authorization, authorized: set[int]) -> bool:
    """Whether a pair binds."""
    at, created, until = binding_time(comment), comment.created_at, run.until
    if run.run_id not in authorized or created is None or until is None or not run.covers(at):
        return False
    unedited = at == created
    named = run.comment_id != 0 and run.comment_id == comment.id and unedited
    return named or until - created <= MAX_DISPATCH_LAG


def bind_triggers(
    eligible: Sequence[Comment], auths: Sequence[Authorization], observed: Sequence[Authorization]
) -> Binding:
    """Bind the batch's authorizations to eligible comments.

    ``eligible``: comments created after the baseline and not own output.  ``auths``: from
    :func:`authorizations` over the accepted batch.  ``observed``: from
    :func:`observed_authorizations` over every recorded issue_comment run (this and earlier
    iterations).  Logins are compared lowercased.  Never raises on unknown times.
    """
    by_comment: dict[int, set[int]] = {}
    unbound: set[int] = set()
    for login in sorted({a.login for a in auths}):
        authorized = {a.run_id for a in auths if a.login == login}
        bound: set[int] = set()
        pairs = _pair_runs(_login_runs(login, auths, observed), _login_candidates(login, eligible))
        for comment, run in pairs:
            if _binds(comment, run, authorized):
                by_comment.setdefault(comment.id, set()).add(run.run_id)
                bound.add(run.run_id)
        unbound |= authorized - bound
    return Binding(
        by_comment={cid: tuple(sorted(ids)) for cid, ids in sorted(by_comment.items())},
        unbound=tuple(sorted(unbound)),
    )
