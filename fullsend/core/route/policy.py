"""What a repository configures about the Route decision (docs/rules.md, family Route): the
stages it enabled, the users and Apps whose events may start one, and a trigger phrase.  Pure.

:func:`read_policy` reads the Route step's inputs; :func:`with_trigger_phrase` turns a comment
that starts with the phrase into the stage command it names, before :func:`decide` sees it;
:func:`screen_login` refuses a login outside ``allowed_users`` before its role is read;
:func:`screen_decision` refuses an App outside ``allowed_bots`` and a stage the repository did not
enable.  Every input empty is the decision as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from fullsend.core.route.decision import (
    COMMANDS,
    LABEL_READY_TO_CODE,
    PR_OPENING_ACTIONS,
    REVIEW_COMMENT_EVENT,
    RULE_ASSIGNED,
    RULE_LABEL,
    RULE_WRONG_ITEM,
    STAGES,
    AskRole,
    Role,
    RouteDecision,
    decide,
    floor_decision,
    shown,
)
from fullsend.core.route.event import RouteEvent
from fullsend.core.route.rounds import DEFAULT_MAX_FIX_ROUNDS, parse_max_fix_rounds

RULE_STAGE_OFF = "route-stage-off"
RULE_USER_NOT_ALLOWED = "route-user-not-allowed"
RULE_BOT_NOT_ALLOWED = "route-bot-not-allowed"
POLICY_RULE_IDS: tuple[str, ...] = (RULE_STAGE_OFF, RULE_USER_NOT_ALLOWED, RULE_BOT_NOT_ALLOWED)
#: The stage command a stage name after the trigger phrase stands for.
STAGE_COMMAND = {stage: next(c for c, spec in COMMANDS.items() if spec[0] == stage) for stage in STAGES}


@dataclass(frozen=True)
class RoutePolicy:
    """``enabled``: the stages Route may select (``None``: all).  ``allowed_users`` /
    ``allowed_bots``: the lowercased logins whose events may start a stage (``None``: anyone the
    rules admit).  ``trigger_phrase``: a first word that, followed by a stage name, is that stage's
    command (``""``: none).  ``label_triggers`` / ``assignee_triggers``: ``(casefolded label or
    lowercased login, stage)`` pairs: adding that label, or assigning that login, selects the stage
    under its command's floor and kind of item.  ``review_app``: the App login whose
    ``changes_requested`` review starts a fix (``""``: ``<owner>-review[bot]``); ``max_fix_rounds``:
    how many such reviews on one pull request start one (docs/rules.md#route-fix-rounds)."""

    enabled: frozenset[str] | None = None
    allowed_users: frozenset[str] | None = None
    allowed_bots: frozenset[str] | None = None
    trigger_phrase: str = ""
    label_triggers: tuple[tuple[str, str], ...] = ()
    assignee_triggers: tuple[tuple[str, str], ...] = ()
    review_app: str = ""
    max_fix_rounds: int = DEFAULT_MAX_FIX_ROUNDS


def _logins(text: str) -> frozenset[str] | None:
    names = frozenset(n.strip().lstrip("@").lower() for n in text.replace("\n", ",").split(",") if n.strip())
    return names or None


def parse_enabled(text: str) -> frozenset[str] | None:
    """The ``stages`` input (docs/rules.md#route-stage-off): ``"review, fix"`` → those stages;
    blank or ``all`` → ``None`` (every stage).  Raises ``ValueError`` naming an unknown stage."""
    names = {n.strip().lower() for n in text.split(",") if n.strip()}
    if not names or names == {"all"}:
        return None
    unknown = sorted(names - set(STAGES))
    if unknown:
        raise ValueError(
            f"stages {text.strip()[:200]!r}: unknown {', '.join(unknown)}; "
            f"use a comma-separated list of {', '.join(STAGES)}, or all"
        )
    return frozenset(names)


def parse_triggers(name: str, text: str) -> tuple[tuple[str, str], ...]:
    """``"ai:review=review, ai:fix=fix"`` → ``(("ai:review", "review"), ("ai:fix", "fix"))``, keys
    casefolded and a leading ``@`` dropped.  Raises ``ValueError`` naming ``name`` and the entry."""
    pairs = []
    for entry in (e.strip() for e in text.replace("\n", ",").split(",")):
        if not entry:
            continue
        key, sep, stage = entry.rpartition("=")
        key, stage = key.strip().lstrip("@").casefold(), stage.strip().lower()
        if not sep or not key or stage not in STAGES:
            raise ValueError(f"{name} entry {entry[:80]!r}: give <name>=<stage>, the stage one of {', '.join(STAGES)}")
        pairs.append((key, stage))
    return tuple(pairs)


def read_policy(inputs: Mapping[str, str]) -> RoutePolicy:
    """The policy of the Route step's inputs ``stages``, ``allowed_users``, ``allowed_bots``,
    ``trigger_phrase``, ``label_triggers``, ``assignee_triggers``, ``review_app`` and ``max_fix_rounds``
    (missing: empty).  Raises
    ``ValueError`` naming the input and the fix."""
    phrase = inputs.get("trigger_phrase", "").strip()
    if phrase and (len(phrase.split()) != 1 or phrase.startswith("/")):
        raise ValueError(f"trigger_phrase {phrase[:60]!r}: give one word that is no slash command, such as @your-app")
    review_app = inputs.get("review_app", "").strip().lstrip("@")
    if review_app and (len(review_app.split()) != 1 or not review_app.endswith("[bot]")):
        raise ValueError(f"review_app {review_app[:60]!r}: give the App's login as GitHub shows it, ending in [bot]")
    bots = _logins(inputs.get("allowed_bots", ""))
    if bots and any(not b.endswith("[bot]") for b in bots):
        raise ValueError("allowed_bots: give App logins as GitHub shows them, ending in [bot] (coder[bot])")
    return RoutePolicy(
        parse_enabled(inputs.get("stages", "")),
        _logins(inputs.get("allowed_users", "")),
        bots,
        phrase,
        parse_triggers("label_triggers", inputs.get("label_triggers", "")),
        parse_triggers("assignee_triggers", inputs.get("assignee_triggers", "")),
        review_app,
        parse_max_fix_rounds(inputs.get("max_fix_rounds", "")),
    )


def decide_with(event: RouteEvent, policy: RoutePolicy, role: Role | None = None) -> RouteDecision | AskRole:
    """:func:`decide`, or the stage a configured label or assignee selects (docs/rules.md#route-label,
    #route-assigned): the sender needs the floor of that stage's command, on the item it works on;
    an App sender needs none.  Never raises."""
    if event.name not in ("issues", "pull_request_target"):
        return decide(event, role, policy.review_app)
    if event.action == "labeled":
        key, rule, what = event.label.casefold(), RULE_LABEL, f"the label {shown(event.label)}"
        pairs = policy.label_triggers
    elif event.action == "assigned":
        key, rule, what = event.assignee.lower(), RULE_ASSIGNED, f"assigning @{event.assignee}"
        pairs = policy.assignee_triggers
    else:
        return decide(event, role)
    stage = next((s for k, s in pairs if k == key), "")
    if not stage:
        return decide(event, role)
    _, floor, where = COMMANDS[STAGE_COMMAND[stage]]
    if (where == "pr") != event.is_pull_request and where != "any":
        needed = "a pull request" if where == "pr" else "an issue"
        return RouteDecision("", RULE_WRONG_ITEM, f"{what} selects {stage}, which works only on {needed}; no stage")
    if event.sender.is_app:
        return RouteDecision(stage, rule, f"{what} by the App @{event.sender.login} selects {stage}")
    return floor_decision(stage, rule, what, event.sender.login, floor, role)


def with_trigger_phrase(event: RouteEvent, phrase: str) -> RouteEvent:
    """``event`` with a comment ``<phrase> <stage> <rest>`` rewritten to ``<command> <rest>`` (the
    stage's command, same floors and items); any other event or comment unchanged.  A phrase
    followed by no stage name is left as it is: no command (docs/rules.md#route-no-command)."""
    if not phrase or event.name not in ("issue_comment", REVIEW_COMMENT_EVENT):
        return event
    first_line, _, later = event.comment_body.replace("\r", "").partition("\n")
    words = first_line.replace("\t", " ").split()
    if len(words) < 2 or words[0].casefold() != phrase.casefold():
        return event
    command = STAGE_COMMAND.get(words[1].lower())
    if command is None:
        return event
    rest = " ".join([command, *words[2:]])
    return dataclasses.replace(event, comment_body=rest + ("\n" + later if later else ""))


def screen_login(login: str, policy: RoutePolicy) -> RouteDecision | None:
    """No stage, before any role read, for a user outside ``allowed_users``; else ``None``."""
    if policy.allowed_users is None or login.lower() in policy.allowed_users:
        return None
    return RouteDecision(
        "", RULE_USER_NOT_ALLOWED, f"@{login} is not in allowed_users, so no event of theirs starts a stage; no stage"
    )


def trusted_app(event: RouteEvent, policy: RoutePolicy) -> str:
    """The App whose being an App let the decision skip the role read (pull request opened or
    closed, ``ready-to-code`` or a configured label added, a configured login assigned, a fix on
    its pull request), else ``""``."""
    if event.name == "pull_request_target" and event.action in PR_OPENING_ACTIONS and event.pr_author.is_app:
        return event.pr_author.login
    if event.name == "pull_request_target" and event.action == "closed" and event.sender.is_app:
        return event.sender.login
    if event.name == "issues" and event.label == LABEL_READY_TO_CODE and event.sender.is_app:
        return event.sender.login
    configured = (event.action == "labeled" and any(k == event.label.casefold() for k, _ in policy.label_triggers)) or (
        event.action == "assigned" and any(k == event.assignee.lower() for k, _ in policy.assignee_triggers)
    )
    if configured and event.sender.is_app:
        return event.sender.login
    if event.name == "pull_request_review" and event.pr_author.is_app:
        return event.pr_author.login
    return ""


def screen_decision(event: RouteEvent, decision: RouteDecision, policy: RoutePolicy, role_read: bool) -> RouteDecision:
    """``decision``, or no stage: an App outside ``allowed_bots`` admitted for being an App
    (``role_read`` false), or a stage outside ``enabled``.  Never raises."""
    if not decision.stage:
        return decision
    app = "" if role_read else trusted_app(event, policy)
    if app and policy.allowed_bots is not None and app.lower() not in policy.allowed_bots:
        return RouteDecision(
            "", RULE_BOT_NOT_ALLOWED, f"the App @{app} is not in allowed_bots, so its event starts no stage; no stage"
        )
    if policy.enabled is None or decision.stage in policy.enabled:
        return decision
    listed = ", ".join(s for s in STAGES if s in policy.enabled) or "none"
    return RouteDecision(
        "",
        RULE_STAGE_OFF,
        f"the event would select {decision.stage} ({decision.rule}), which this repository has not "
        f"enabled (stages: {listed}); no stage",
    )
