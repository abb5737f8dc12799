"""Fix rounds and the head a fix pushes to (docs/rules.md#route-fix-rounds, #route-fork-head).
Pure: the Route job reads the pull request and its reviews and hands them in.

A Fix push starts Review again (``synchronize``), and a Review that requests changes starts Fix
again, so the chain is bounded here: a ``changes_requested`` review by the review App starts a fix
only while the App's ``changes_requested`` reviews on that pull request, this one included, number
at most ``max_fix_rounds``.  A count that cannot be read starts none (a loop costs an agent run a
round; a missed fix is one ``/fs-fix`` away).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fullsend.core.model import Review
from fullsend.core.route.decision import RULE_FORK_HEAD, RouteDecision, shown

RULE_FIX_ROUNDS = "route-fix-rounds"
ROUNDS_RULE_IDS: tuple[str, ...] = (RULE_FIX_ROUNDS,)
DEFAULT_MAX_FIX_ROUNDS = 3
MAX_FIX_ROUNDS_LIMIT = 100


@dataclass(frozen=True)
class FixHead:
    """The pull request as a fix needs it: its head ``branch`` and the ``repository`` it lives in
    (``owner/name``); ``unreadable`` says why it could not be read (then no fix)."""

    branch: str = ""
    repository: str = ""
    unreadable: str = ""


def parse_max_fix_rounds(text: str) -> int:
    """The ``max_fix_rounds`` input: blank → 3; a whole number 0-100.  Raises ``ValueError``."""
    value = text.strip()
    if not value:
        return DEFAULT_MAX_FIX_ROUNDS
    if not (value.isascii() and value.isdigit()) or int(value) > MAX_FIX_ROUNDS_LIMIT:
        raise ValueError(f"max_fix_rounds {value[:20]!r}: give a whole number from 0 to {MAX_FIX_ROUNDS_LIMIT}")
    return int(value)


def fix_rounds(reviews: Iterable[Review], review_app: str) -> int:
    """How many ``changes_requested`` reviews ``review_app`` (a login, any case) posted."""
    app = review_app.lower()
    return sum(1 for r in reviews if r.state.upper() == "CHANGES_REQUESTED" and r.author.lower() == app)


def bound_fix(decision: RouteDecision, rounds: int | None, max_rounds: int, why: str = "") -> RouteDecision:
    """``decision`` (a fix a review started), or no stage past ``max_rounds`` rounds or when
    ``rounds`` is ``None`` (unreadable: ``why``).  Never raises."""
    if rounds is None:
        return RouteDecision(
            "", RULE_FIX_ROUNDS, f"the review App's rounds on this pull request could not be counted ({why}); no stage"
        )
    if rounds > max_rounds:
        return RouteDecision(
            "",
            RULE_FIX_ROUNDS,
            f"this is the review App's changes_requested review {rounds} on this pull request, and "
            f"max_fix_rounds is {max_rounds}: Fix starts no more rounds (comment /fs-fix to start one); no stage",
        )
    return RouteDecision(decision.stage, decision.rule, f"{decision.reason} (round {rounds} of {max_rounds})")


def fix_head_decision(decision: RouteDecision, head: FixHead, repository: str) -> RouteDecision:
    """``decision`` when the fix can push to ``head``; no stage when it is unreadable or a fork's."""
    if head.unreadable or not head.branch:
        why = head.unreadable or "it names no head branch"
        return RouteDecision("", RULE_FORK_HEAD, f"the pull request's head could not be read ({why}); no stage")
    if head.repository.lower() != repository.lower():
        return RouteDecision(
            "",
            RULE_FORK_HEAD,
            f"the pull request's head is {shown(head.repository)}, not {repository}: a fork is never fixed; no stage",
        )
    return decision
