"""What steering saved in a repository, counted from its comments and run records (docs/architecture.md "Report").

Inputs are what ``fullsend report`` reads: every issue and pull-request comment of the repository
in the window, and the repository's workflow runs.  Three kinds of comment count:

- a **terminal status comment** (``fullsend.core.receipt.status_comment``) is a run that worked;
  its figures marker (``fullsend.core.report.figures``) gives its stage and spend, and its copy of
  the steer marker the follow-up runs it absorbed;
- a **receipt** counts as the queued run's reader counts it (docs/rules.md#receipt-lists-my-run):
  its whole body is a receipt, its author is the job token's login, it was never edited, and the
  caller's ``judge`` (the proof of a signed one, docs/rules.md "Receipt proof"; the unsigned
  form's input) does not refuse it; every other receipt-shaped comment is refused and counted by
  rule (docs/rules.md#receipt-refused-edited, docs/rules.md#receipt-refused-author, the proof's
  rule ids), except one whose edit state only REST's timestamps tell and they differ: that one is
  counted apart, neither absorbed nor refused;
- a **start status comment** only marks its run as one that worked.

Status comments count only when an App wrote them (the role token is an App's installation
token): a person's comment in their shape is ignored.

A run a genuine receipt lists was **skipped** when the absorbing run's terminal status is found (so
status comments were on), its record is completed with conclusion ``success`` and it posted no
status comment of its own; what it saved is estimated as what the
absorbing run spent (its agent minutes and cost).  Pure: standard library and ``fullsend.core``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fullsend.core.identity import Identity, from_rest, same_identity
from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.receipt.marker import Marker, is_unedited, parse_marker
from fullsend.core.receipt.signed import SignedReceipt, any_receipt
from fullsend.core.receipt.status_comment import is_terminal, status_run_id
from fullsend.core.report.figures import RunFigures, parse_figures

RULE_RECEIPT_EDITED = "receipt-refused-edited"
RULE_RECEIPT_AUTHOR = "receipt-refused-author"
REPORT_RULE_IDS = (RULE_RECEIPT_EDITED, RULE_RECEIPT_AUTHOR)
#: The stage of a receipt whose absorbing run left no figures.
UNKNOWN_STAGE = "unknown"
#: Why an absorbed run is not counted as a skip: no terminal status of the absorbing run copies the
#: receipt (so status comments may be off, and a run that worked would show none), no record of it
#: in the listing, it posted status
#: comments of its own (it worked: a re-run), it has not finished, GitHub cancelled it (a newer
#: pending run of its concurrency group replaced it), or it ended in another conclusion.
NOT_SKIPPED_REASONS = ("unproven", "no-run-record", "worked", "not-finished", "cancelled", "other-conclusion")


@dataclass(frozen=True)
class ItemComment:
    """A comment of the repository with the number of the issue or pull request it is on."""

    number: int
    comment: Comment


@dataclass
class StageTally:
    """One stage's counts.  Minutes and US dollars are sums of the absorbing runs' own figures."""

    stage: str
    runs_worked: int = 0
    runs_steered: int = 0
    updates_absorbed: int = 0
    runs_skipped: int = 0
    skips_without_figures: int = 0
    agent_minutes_spent: float = 0.0
    cost_usd_spent: float = 0.0
    agent_minutes_saved: float = 0.0
    cost_usd_saved: float = 0.0


@dataclass
class Tally:
    """The report: one :class:`StageTally` per stage, receipts refused per rule id, and the
    absorbed runs that are not counted as skips, per reason (:data:`NOT_SKIPPED_REASONS`)."""

    stages: dict[str, StageTally] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REPORT_RULE_IDS, 0))
    not_skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NOT_SKIPPED_REASONS, 0))
    edit_unknown: int = 0  # receipts read over REST alone whose timestamps differ: edited or not, unknown

    def stage(self, name: str) -> StageTally:
        """The tally of stage ``name``, made on first use."""
        return self.stages.setdefault(name, StageTally(name))


@dataclass(frozen=True)
class _Worked:
    """A run that worked: its terminal figures and steer-marker copy, when it wrote them."""

    number: int
    figures: RunFigures | None
    copy: Marker | None


def _worked_runs(comments: Iterable[ItemComment]) -> dict[str, _Worked]:
    """Run id → what its status comments say; the terminal comment wins over the start one."""
    runs: dict[str, _Worked] = {}
    for ic in comments:
        run_id = status_run_id(ic.comment.body)
        if run_id is None or not ic.comment.author_is_app:
            continue
        if is_terminal(ic.comment.body):
            copy = parse_marker(ic.comment.body)
            runs[run_id] = _Worked(ic.number, parse_figures(ic.comment.body), copy)
        else:
            runs.setdefault(run_id, _Worked(ic.number, None, None))
    return runs


#: A receipt whose edit state only REST's timestamps tell, and they differ (GitHub moves
#: ``updated_at`` on comments nobody edited): neither counted nor refused.
EDIT_UNKNOWN = "edit-unknown"


def _receipt_verdict(comment: Comment, writer: Identity) -> str | None:
    """``None`` for a genuine receipt, else the rule id that refuses it, or :data:`EDIT_UNKNOWN`."""
    if not same_identity(from_rest(comment.author, comment.author_type), writer):
        return RULE_RECEIPT_AUTHOR
    if not is_unedited(comment):
        return RULE_RECEIPT_EDITED if comment.edited is not None else EDIT_UNKNOWN
    return None


def _absorber(receipt: Marker, number: int, worked: Mapping[str, _Worked]) -> _Worked | None:
    """The run whose terminal status on the same item copies this receipt's marker."""
    wanted = (frozenset(receipt.consumed), receipt.head.lower())
    for run in worked.values():
        copy = run.copy
        if run.number == number and copy is not None and (frozenset(copy.consumed), copy.head.lower()) == wanted:
            return run
    return None


#: ``judge(comment, receipt)``: ``None`` when the receipt (signed or not) counts, else the rule id
#: that refuses it (its proof's, or ``receipt-unsigned``).
Judge = Callable[[ItemComment, "Marker | SignedReceipt"], "str | None"]


def tally(
    comments: Sequence[ItemComment], runs: Mapping[int, WorkflowRun], receipt_login: str, judge: Judge | None = None
) -> Tally:
    """Count runs worked, steered and skipped per stage, and receipts refused per rule id.

    ``runs`` maps run id → its record (the repository's listing); ``receipt_login`` is the job
    token's login (``github-actions[bot]`` on GitHub); ``judge`` decides what the login and edit
    checks leave (default: every receipt counts).  A consumed run listed by several genuine
    receipts counts once, for the first receipt listing it."""
    result, worked = Tally(), _worked_runs(comments)
    _count_worked(result, worked)
    counted: set[int] = set()
    writer = Identity(receipt_login)
    for ic in comments:
        found = any_receipt(ic.comment.body)
        if found is None:
            continue
        receipt = found.marker if isinstance(found, SignedReceipt) else found
        verdict = _receipt_verdict(ic.comment, writer) or (judge(ic, found) if judge is not None else None)
        if verdict == EDIT_UNKNOWN:
            result.edit_unknown += 1
        elif verdict is not None:
            result.refused[verdict] = result.refused.get(verdict, 0) + 1
        else:
            _count_receipt(result, receipt, ic.number, worked, runs, counted)
    return result


def _count_receipt(
    result: Tally,
    receipt: Marker,
    number: int,
    worked: Mapping[str, _Worked],
    runs: Mapping[int, WorkflowRun],
    counted: set[int],
) -> None:
    """One genuine receipt: its runs absorbed, for the stage of the run whose terminal status
    copies it; each a skip only with that run found and the run's record proving it."""
    absorber = _absorber(receipt, number, worked)
    figures = absorber.figures if absorber else None
    row = result.stage(figures.stage if figures else UNKNOWN_STAGE)
    for run_id in receipt.consumed:
        if run_id in counted:
            continue
        counted.add(run_id)
        if absorber is None:
            row.updates_absorbed += 1
            result.not_skipped["unproven"] += 1
        else:
            _count_consumed(result, row, runs.get(run_id), str(run_id) in worked, figures)


def _count_worked(result: Tally, worked: Mapping[str, _Worked]) -> None:
    for run in worked.values():
        if run.figures is None:
            continue
        row = result.stage(run.figures.stage)
        row.runs_worked += 1
        row.agent_minutes_spent += run.figures.agent_minutes
        row.cost_usd_spent += run.figures.cost_usd
        if run.copy is not None and run.copy.consumed:
            row.runs_steered += 1


def _count_consumed(
    result: Tally, row: StageTally, run: WorkflowRun | None, worked: bool, figures: RunFigures | None
) -> None:
    """One follow-up run a genuine receipt lists: absorbed, and skipped when its record proves it."""
    row.updates_absorbed += 1
    reason = _not_skipped(run, worked)
    if reason is not None:
        result.not_skipped[reason] += 1
        return
    row.runs_skipped += 1
    if figures is None:
        row.skips_without_figures += 1
    else:
        row.agent_minutes_saved += figures.agent_minutes
        row.cost_usd_saved += figures.cost_usd


def _not_skipped(run: WorkflowRun | None, worked: bool) -> str | None:
    """The reason an absorbed run is not a proven skip, or ``None`` when it is one."""
    if run is None:
        return "no-run-record"
    if worked:
        return "worked"
    if run.status != "completed":
        return "not-finished"
    if run.conclusion == "success":
        return None
    return "cancelled" if run.conclusion == "cancelled" else "other-conclusion"
