"""The Route decision: which stage, if any, an event selects, and why (docs/rules.md, family
Route).  Pure: the one fact it cannot know, a user's role on the repository, is asked for.

:func:`decide` answers :class:`AskRole` when the decision needs a login's role (at most one per
event); the caller reads it (the collaborator permission API) and calls again with the
:class:`Role`.  The rules are the retired bash Route job's, row for row: floors ``triage``
(admin, maintain, write, triage) and ``write`` (admin, maintain, write), of ``role_name``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fullsend.core.app_names import review_app_login
from fullsend.core.route.event import Actor, RouteEvent
from fullsend.core.wire import THREAD_EVENT

RULE_COMMAND = "route-command"
RULE_NEEDS_INFO = "route-needs-info-answer"
RULE_ITEM_EVENT = "route-item-event"
RULE_LABEL = "route-label"
RULE_REVIEW_FIX = "route-review-fix"
RULE_APP_COMMENT = "route-app-comment"
RULE_WRONG_ITEM = "route-wrong-item"
RULE_ROLE_LOW = "route-role-low"
RULE_ROLE_UNREADABLE = "route-role-unreadable"
RULE_NO_COMMAND = "route-no-command"
RULE_NOT_ROUTED = "route-not-routed"
RULE_REVIEW_IGNORED = "route-review-ignored"
RULE_FORK_HEAD = "route-fork-head"
RULE_NO_FIX_LABEL = "route-no-fix-label"
RULE_FIX_NOT_OPTED_IN = "route-fix-not-opted-in"
RULE_ASSIGNED = "route-assigned"
ROUTE_RULE_IDS: tuple[str, ...] = (
    RULE_COMMAND,
    RULE_NEEDS_INFO,
    RULE_ITEM_EVENT,
    RULE_LABEL,
    RULE_REVIEW_FIX,
    RULE_APP_COMMENT,
    RULE_WRONG_ITEM,
    RULE_ROLE_LOW,
    RULE_ROLE_UNREADABLE,
    RULE_NO_COMMAND,
    RULE_NOT_ROUTED,
    RULE_REVIEW_IGNORED,
    RULE_FORK_HEAD,
    RULE_NO_FIX_LABEL,
    RULE_FIX_NOT_OPTED_IN,
    RULE_ASSIGNED,
)
#: Every stage the decision can select, in pipeline order (the ``stages`` input's vocabulary).
STAGES: tuple[str, ...] = ("triage", "code", "review", "fix", "retro", "prioritize")

TRIAGE, WRITE = "triage", "write"
#: floor → the ``role_name`` values that reach it (a custom role reaches none).
FLOORS: dict[str, frozenset[str]] = {
    TRIAGE: frozenset({"admin", "maintain", "write", "triage"}),
    WRITE: frozenset({"admin", "maintain", "write"}),
}
#: slash command → (stage, floor, where: "pr", "issue" or "any").  WIRE: the first token of the
#: comment's first line.  ``/fullsend retro`` is the one command with an argument.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "/fs-triage": ("triage", TRIAGE, "any"),
    "/fs-code": ("code", WRITE, "issue"),
    "/fs-review": ("review", TRIAGE, "pr"),
    "/fs-fix": ("fix", WRITE, "pr"),
    "/fs-retro": ("retro", WRITE, "any"),
    "/fullsend": ("retro", WRITE, "any"),
    "/fs-prioritize": ("prioritize", WRITE, "any"),
}
PR_OPENING_ACTIONS = ("opened", "synchronize", "ready_for_review")
LABEL_READY_FOR_TRIAGE, LABEL_READY_TO_CODE = "ready-for-triage", "ready-to-code"
LABEL_READY_FOR_REVIEW = "ready-for-review"
LABEL_NEEDS_INFO, LABEL_FEATURE = "needs-info", "feature"
LABEL_FIX, LABEL_NO_FIX = "fullsend-fix", "fullsend-no-fix"
#: A comment in a pull request's review thread (docs/rules.md#route-command).
REVIEW_COMMENT_EVENT = THREAD_EVENT
_SHOWN_MAX = 60


@dataclass(frozen=True)
class Role:
    """``login``'s ``role_name`` on the repository (``none`` when it has none); ``unreadable``
    says why the role could not be read (the role then counts as ``none``: fail closed)."""

    login: str
    role_name: str
    unreadable: str = ""


@dataclass(frozen=True)
class AskRole:
    """The decision needs ``login``'s role: read it and call :func:`decide` again."""

    login: str


@dataclass(frozen=True)
class RouteDecision:
    """``stage`` ("" for none), the ``rule`` id and a one-sentence ``reason`` (no rule id in it)."""

    stage: str
    rule: str
    reason: str


def shown(text: str) -> str:
    """Untrusted ``text`` (a label, a command word) for a log line: quoted, control characters
    escaped, cut at 60 characters."""
    cut = text if len(text) <= _SHOWN_MAX else text[:_SHOWN_MAX] + "…"
    return repr(cut)


def decide(event: RouteEvent, role: Role | None = None, review_app: str = "") -> RouteDecision | AskRole:
    """The stage ``event`` selects, or :class:`AskRole` when a login's role is needed and
    ``role`` is not that login's.  ``review_app``: the login whose ``changes_requested`` review
    starts a fix (``""``: :func:`default_review_app`; docs/rules.md#route-review-ignored).  Never raises."""
    if event.name == "issue_comment":
        return _comment(event, role)
    if event.name == "issues":
        return _issue(event, role)
    if event.name == "pull_request_target":
        return _pull_request(event, role)
    if event.name == "pull_request_review":
        return _review(event, role, review_app or default_review_app(event.owner))
    if event.name == REVIEW_COMMENT_EVENT:
        return _review_comment(event, role)
    return RouteDecision("", RULE_NOT_ROUTED, f"the event {shown(event.name)} selects no stage")


def default_review_app(owner: str) -> str:
    """The review App's login when the ``review_app`` input is empty: the review App's name
    derived from ``owner`` (``<owner>-review``, cut to GitHub's 34 characters) + ``[bot]``;
    ``""`` (matching no review) for an owner that is no login.  Never raises."""
    return review_app_login(owner)


def floor_decision(
    stage: str, rule: str, what: str, login: str, floor: str, role: Role | None
) -> RouteDecision | AskRole:
    """``stage`` when ``login``'s role reaches ``floor`` (:class:`AskRole` until ``role`` is
    ``login``'s); ``what`` starts the reason.  Never raises."""
    if login and (role is None or role.login != login):
        return AskRole(login)
    name = role.role_name if role is not None and login else "none"
    who = f"@{login}" if login else "an unknown user"
    if role is not None and role.unreadable and login:
        return RouteDecision(
            "", RULE_ROLE_UNREADABLE, f"{what} by {who}: the role could not be read ({role.unreadable}); no stage"
        )
    if name in FLOORS[floor]:
        return RouteDecision(stage, rule, f"{what} by {who} (role {name}) selects {stage}")
    return RouteDecision(
        "", RULE_ROLE_LOW, f"{what} by {who} needs the {floor} role or higher, and the role is {shown(name)}; no stage"
    )


def _command_word(body: str) -> tuple[str, str]:
    """(command, argument): the first two whitespace tokens of the first line, CRs dropped."""
    words = body.split("\n", 1)[0].replace("\r", "").replace("\t", " ").split(" ")
    tokens = [*(w for w in words if w), "", ""]
    return tokens[0], tokens[1]


def _comment(event: RouteEvent, role: Role | None) -> RouteDecision | AskRole:
    author = event.comment_author
    if author.is_app:
        return RouteDecision("", RULE_APP_COMMENT, f"a comment by the App @{author.login} never commands a stage")
    command, argument = _command_word(event.comment_body)
    spec = COMMANDS.get(command)
    if spec is None:
        return _plain_comment(event, author)
    stage, floor, where = spec
    if command == "/fullsend" and argument != "retro":
        return RouteDecision("", RULE_NO_COMMAND, f"/fullsend takes only 'retro', not {shown(argument)}; no stage")
    kind = "a pull request" if event.is_pull_request else "an issue"
    if (where == "pr" and not event.is_pull_request) or (where == "issue" and event.is_pull_request):
        needed = "a pull request" if where == "pr" else "an issue"
        return RouteDecision("", RULE_WRONG_ITEM, f"{command} works only on {needed}, and this is {kind}; no stage")
    return floor_decision(stage, RULE_COMMAND, f"{command} on {kind}", author.login, floor, role)


def _review_comment(event: RouteEvent, role: Role | None) -> RouteDecision | AskRole:
    """A comment in a review thread commands like a comment on the pull request; a fix is never
    started on a fork's head (it could not be pushed), which the thread's payload names."""
    if event.action != "created":
        return _not_routed(event)
    command, _ = _command_word(event.comment_body)
    spec = COMMANDS.get(command)
    fix = spec is not None and spec[0] == "fix" and not event.comment_author.is_app
    if fix and event.pr_head_repo != event.repository:
        return RouteDecision(
            "",
            RULE_FORK_HEAD,
            f"{command} in a review thread: the head is {shown(event.pr_head_repo)}, not "
            f"{event.repository}: a fork is never fixed; no stage",
        )
    return _comment(event, role)


def _plain_comment(event: RouteEvent, author: Actor) -> RouteDecision:
    """A comment without a command: an answer on an issue waiting for information goes to triage."""
    if (
        not event.is_pull_request
        and LABEL_NEEDS_INFO in event.labels
        and LABEL_FEATURE not in event.labels
        and (event.comment_association != "NONE" or author.login == event.issue_author)
    ):
        return RouteDecision(
            "triage",
            RULE_NEEDS_INFO,
            f"@{author.login} answered on an issue labelled {LABEL_NEEDS_INFO}; selects triage",
        )
    return RouteDecision("", RULE_NO_COMMAND, "the comment's first word is no stage command; no stage")


def _issue(event: RouteEvent, role: Role | None) -> RouteDecision | AskRole:
    sender = event.sender
    if event.action in ("opened", "edited"):
        return floor_decision("triage", RULE_ITEM_EVENT, f"issue {event.action}", sender.login, TRIAGE, role)
    if event.action == "labeled" and event.label == LABEL_READY_FOR_TRIAGE:
        return RouteDecision("triage", RULE_LABEL, f"the label {LABEL_READY_FOR_TRIAGE} selects triage")
    if event.action == "labeled" and event.label == LABEL_READY_TO_CODE:
        if sender.is_app:
            return RouteDecision(
                "code", RULE_LABEL, f"the label {LABEL_READY_TO_CODE} by the App @{sender.login} selects code"
            )
        return floor_decision("code", RULE_LABEL, f"the label {LABEL_READY_TO_CODE}", sender.login, WRITE, role)
    return _not_routed(event)


def _pull_request(event: RouteEvent, role: Role | None) -> RouteDecision | AskRole:
    if event.action in PR_OPENING_ACTIONS:
        author = event.pr_author
        if author.is_app:
            return RouteDecision(
                "review",
                RULE_ITEM_EVENT,
                f"pull request {event.action}, authored by the App @{author.login}; selects review",
            )
        return floor_decision(
            "review", RULE_ITEM_EVENT, f"pull request {event.action}, authored", author.login, TRIAGE, role
        )
    if event.action == "labeled" and event.label == LABEL_READY_FOR_REVIEW:
        return RouteDecision("review", RULE_LABEL, f"the label {LABEL_READY_FOR_REVIEW} selects review")
    if event.action == "closed":
        if event.sender.is_app:
            return RouteDecision(
                "retro", RULE_ITEM_EVENT, f"pull request closed by the App @{event.sender.login}; selects retro"
            )
        return floor_decision("retro", RULE_ITEM_EVENT, "pull request closed", event.sender.login, TRIAGE, role)
    return _not_routed(event)


def _not_routed(event: RouteEvent) -> RouteDecision:
    label = f" (label {shown(event.label)})" if event.action in ("labeled", "unlabeled") else ""
    return RouteDecision("", RULE_NOT_ROUTED, f"{event.name}/{shown(event.action)}{label} selects no stage")


def _review(event: RouteEvent, role: Role | None, review_app: str) -> RouteDecision | AskRole:
    if event.review_state != "changes_requested" or not review_app or event.review_author.lower() != review_app.lower():
        return RouteDecision(
            "",
            RULE_REVIEW_IGNORED,
            f"only a changes_requested review by @{review_app} starts a "
            f"fix; this is {shown(event.review_state)} by "
            f"{shown(event.review_author)}; no stage",
        )
    if event.pr_head_repo != event.repository:
        return RouteDecision(
            "",
            RULE_FORK_HEAD,
            f"the pull request's head is {shown(event.pr_head_repo)}, not "
            f"{event.repository}: a fork is never fixed; no stage",
        )
    if LABEL_NO_FIX in event.labels:
        return RouteDecision("", RULE_NO_FIX_LABEL, f"the pull request is labelled {LABEL_NO_FIX}; no stage")
    author = event.pr_author
    if author.is_app:
        return RouteDecision(
            "fix", RULE_REVIEW_FIX, f"changes requested on a pull request by the App @{author.login}; selects fix"
        )
    if LABEL_FIX not in event.labels:
        return RouteDecision(
            "",
            RULE_FIX_NOT_OPTED_IN,
            f"a person's pull request (@{author.login}) is fixed only with the label {LABEL_FIX}; no stage",
        )
    return floor_decision(
        "fix",
        RULE_REVIEW_FIX,
        f"changes requested on a pull request labelled {LABEL_FIX}, authored",
        author.login,
        WRITE,
        role,
    )
