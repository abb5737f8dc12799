"""Pre-flight skip decisions as data: ``Skip(rule_id, reason)`` or a reason to do the work.

Implements docs/architecture.md "Pre-flight skips": the manual re-run rule, the review-App
head-reviewed skip and its event kind, with the rule ids ``receipt-lists-my-run`` and
``head-reviewed`` (docs/rules.md#receipt-lists-my-run, docs/rules.md#head-reviewed).  Every doubt runs the work.  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fullsend.core.app_names import review_app_login
from fullsend.core.model import Repo, Review
from fullsend.core.scalars import format_time

RULE_RECEIPT = "receipt-lists-my-run"
RULE_HEAD_REVIEWED = "head-reviewed"
#: ``skip_reason`` output values (docs/architecture.md "Outputs and step summary") per rule id.
SKIP_REASON_OUTPUT = {RULE_RECEIPT: "receipt", RULE_HEAD_REVIEWED: "head-reviewed"}

#: The event kinds a duplicate review comes from.
DUPLICATE_REVIEW_KINDS = frozenset({"opened", "reopened", "synchronized", "marked_ready", "label_changed"})
#: Review states that count (PENDING, DISMISSED and anything unknown do not).
COUNTED_REVIEW_STATES = frozenset({"APPROVED", "CHANGES_REQUESTED", "COMMENTED"})
#: Review states GitHub documents that do not count; any other state is unknown to this version.
UNCOUNTED_REVIEW_STATES = frozenset({"PENDING", "DISMISSED"})
#: The pull_request(_target) payload ``action`` → kind.
PR_ACTION_KINDS = {
    "opened": "opened",
    "reopened": "reopened",
    "synchronize": "synchronized",
    "ready_for_review": "marked_ready",
    "labeled": "label_changed",
    "unlabeled": "label_changed",
}
SHARED_REVIEW_BOT = "fullsend-ai-review[bot]"  # WIRE (docs/architecture.md "Own output")


@dataclass(frozen=True)
class Skip:
    """The run has nothing to do: exit 0 before any comment or script.

    ``rule_id`` is ``receipt-lists-my-run`` or ``head-reviewed``; ``reason`` is a log-ready
    sentence without the rule id.
    """

    rule_id: str
    reason: str
    receipt_url: str = ""  # the receipt comment a ``receipt-lists-my-run`` skip rests on
    stands_on: str = ""  # whose work the skip stands on and what it spent (``core.report.figures.stands_on``)

    @property
    def skip_reason(self) -> str:
        """The ``skip_reason`` output value (``receipt`` / ``head-reviewed``)."""
        return SKIP_REASON_OUTPUT.get(self.rule_id, self.rule_id)


@dataclass(frozen=True)
class NotSkipped:
    """Do the work; ``reason`` says why the skip did not apply (for an INFO line)."""

    reason: str


def is_manual_rerun(run_attempt: str) -> bool:
    """True when ``GITHUB_RUN_ATTEMPT`` is set, non-empty and not exactly ``"1"``."""
    return bool(run_attempt) and run_attempt != "1"


def review_bot_logins(configured: Sequence[str], owner: str) -> tuple[str, ...]:
    """The review App logins: the ``review_bot_logins`` input, else the review App's login derived
    from ``owner`` (``<owner>-review[bot]``, ``fullsend.core.app_names``) and
    ``fullsend-ai-review[bot]`` (docs/architecture.md "Own output").
    """
    given = tuple(login.strip() for login in configured if login.strip())
    if given:
        return given
    derived = review_app_login(owner)
    return ((derived,) if derived else ()) + (SHARED_REVIEW_BOT,)


def transition_kind(
    normalized_kind: str, event_name: str, payload: Mapping[str, Any] | None, status_number: int
) -> str:
    """The event kind of this run for the head-reviewed skip.

    A non-empty normalised kind wins; otherwise the ``GITHUB_EVENT_PATH`` payload (``None`` when
    missing or unreadable ⇒ ``""``) by ``GITHUB_EVENT_NAME``.  Pull-request events require the
    payload's PR number to equal ``status_number`` (> 0); unknown actions and events ⇒ ``""``.
    """
    if normalized_kind:
        return normalized_kind
    if not isinstance(payload, Mapping):
        return ""
    if event_name == "issue_comment":
        return "comment_added"
    if event_name not in ("pull_request", "pull_request_target"):
        return ""
    pr = payload.get("pull_request")
    number = pr.get("number") if isinstance(pr, Mapping) else None
    if isinstance(number, bool) or not isinstance(number, int) or number <= 0 or number != status_number:
        return ""
    action = payload.get("action")
    return PR_ACTION_KINDS.get(action, "") if isinstance(action, str) else ""


@dataclass(frozen=True)
class HeadReviewFacts:
    """What the head-reviewed decision reads.

    ``stage`` is the ``stage`` input; ``kind`` from :func:`transition_kind`; ``run_attempt`` the
    raw ``GITHUB_RUN_ATTEMPT``; ``run_repo`` ``GITHUB_REPOSITORY``; ``pr_repo``/``pr_number``
    the work item.  The forge facts are filled after the reads: ``run_created_at`` (``None`` =
    unreadable), ``head_sha`` (``.head.sha``) and every review.
    """

    stage: str
    kind: str
    run_attempt: str
    run_id: int
    run_repo: str
    pr_repo: str
    pr_number: int
    review_bot_logins: tuple[str, ...]
    run_created_at: datetime | None = None
    head_sha: str = ""
    reviews: tuple[Review, ...] = ()


def head_review_precheck(facts: HeadReviewFacts) -> str | None:
    """The rules decided before any API call: why the skip does not apply, or ``None``."""
    if facts.stage != "review":
        return f'stage "{facts.stage}" is not review'
    if facts.kind not in DUPLICATE_REVIEW_KINDS:
        return f'event "{facts.kind}" is not one a duplicate review comes from'
    if is_manual_rerun(facts.run_attempt):
        return f"run attempt {facts.run_attempt} is a manual re-run"
    if facts.run_id <= 0:
        return "no run id"
    if facts.pr_number <= 0:
        return "no pull request number"
    if Repo.parse(facts.run_repo) is None:
        return f'run repository "{facts.run_repo}" is not owner/repo'
    if Repo.parse(facts.pr_repo) is None:
        return f'pull request repository "{facts.pr_repo}" is not owner/repo'
    return None


def _review_counts(review: Review, head: str, after: datetime, logins: Sequence[str], state: bool = True) -> bool:
    """Whether one review counts: counted state, forge-reported Bot, exact review App login,
    on ``head``, submitted strictly after ``after`` (``state`` False: all but the state).
    """
    wanted = {login.lower() for login in logins}
    return (
        (review.state.upper() in COUNTED_REVIEW_STATES or not state)
        and review.author_is_app
        and review.author.lower() in wanted
        and bool(review.commit_id)
        and review.commit_id.lower() == head.lower()
        and review.submitted_at is not None
        and review.submitted_at > after
    )


def head_review_decision(facts: HeadReviewFacts) -> Skip | NotSkipped:
    """The whole decision over gathered facts.

    Skip iff the pre-checks pass, this run's ``created_at`` is known, the PR head is known and
    any review of it by a review App login was submitted strictly after the run was created.
    """
    why = head_review_precheck(facts)
    if why is not None:
        return NotSkipped(why)
    created = facts.run_created_at
    if created is None:
        return NotSkipped("this run's created_at is unreadable")
    head = facts.head_sha
    if not head:
        return NotSkipped("the pull request head is unknown")
    if any(_review_counts(r, head, created, facts.review_bot_logins) for r in facts.reviews):
        return Skip(RULE_HEAD_REVIEWED, f"the review App already reviewed {head[:12]} after this run was created")
    why = f"no review App review of {head[:12]} after {format_time(created)}"
    unknown = [
        r
        for r in facts.reviews
        if r.state.upper() not in COUNTED_REVIEW_STATES | UNCOUNTED_REVIEW_STATES
        and _review_counts(r, head, created, facts.review_bot_logins, state=False)
    ]
    if unknown:  # a state GitHub may have added since: it does not count, and the line says so
        why += f'; review {unknown[0].id} is in state "{unknown[0].state}", unknown to this version'
    return NotSkipped(why)


def head_reviewed(facts: HeadReviewFacts) -> Skip | None:
    """``Skip`` when the review App already reviewed the current head, else ``None``."""
    verdict = head_review_decision(facts)
    return verdict if isinstance(verdict, Skip) else None
