"""The repository's Route policy (docs/rules.md, family Route): the stages it enabled, the users
and Apps whose events may start one, and a trigger phrase.  Pure rows first; then the whole
decision through ``fullsend.app.commands.route.route`` with a table of roles in place of GitHub."""

from __future__ import annotations

import dataclasses

import pytest

from fullsend.app.commands.route import route
from fullsend.core.route import policy as P
from fullsend.core.route.decision import (
    RULE_COMMAND,
    RULE_ITEM_EVENT,
    RULE_NO_COMMAND,
    RULE_ROLE_LOW,
    STAGES,
    RouteDecision,
)
from fullsend.core.route.event import route_event
from tests.support.route_events import REPO, ROLES, payload


class Roles:
    """``ROLES`` as GitHub would answer; ``asked`` records every login read."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def collaborator_role(self, login: str) -> str:
        self.asked.append(login)
        return ROLES.get(login, "none")


def comment(body: str, who: str, pr: bool = True, **env: str):
    data = payload(
        "issue_comment", COMMENT_BODY=body, COMMENT_AUTHOR=who, IS_PR="true" if pr else "false", ACTION="created", **env
    )
    return route_event("issue_comment", data, REPO)


def pr_opened(author: str, app: bool):
    data = payload(
        "pull_request_target",
        ACTION="opened",
        IS_PR="true",
        PR_AUTHOR=author,
        PR_AUTHOR_TYPE="Bot" if app else "User",
        PR_HEAD_REPO=REPO,
    )
    return route_event("pull_request_target", data, REPO)


def decided(event, **inputs: str) -> tuple[RouteDecision, list[str]]:
    roles = Roles()
    return route(event, roles, P.read_policy(inputs)), roles.asked


# --- reading the inputs -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "enabled"),
    [
        ("", None),
        ("  ", None),
        ("all", None),
        ("review", frozenset({"review"})),
        (" Review , fix,", frozenset({"review", "fix"})),
        ("triage,code,review,fix,retro,prioritize", frozenset(STAGES)),
    ],
)
def test_the_stages_input(text: str, enabled: frozenset[str] | None) -> None:
    assert P.parse_enabled(text) == enabled


@pytest.mark.parametrize("text", ["reviews", "review,all", "review;fix", "code,deploy"])
def test_an_unknown_stage_in_the_input_is_refused_by_name(text: str) -> None:
    with pytest.raises(ValueError, match="unknown") as caught:
        P.parse_enabled(text)
    assert "use a comma-separated list of triage, code, review, fix, retro, prioritize, or all" in str(caught.value)


def test_the_login_lists_trim_lowercase_and_drop_an_at_sign() -> None:
    policy = P.read_policy({"allowed_users": " @Wendy, tom\nann ,", "allowed_bots": "Coder[bot]"})
    assert policy.allowed_users == frozenset({"wendy", "tom", "ann"})
    assert policy.allowed_bots == frozenset({"coder[bot]"})
    assert P.read_policy({}) == P.RoutePolicy()


@pytest.mark.parametrize(
    ("inputs", "says"),
    [
        ({"trigger_phrase": "hey bot"}, "trigger_phrase 'hey bot': give one word"),
        ({"trigger_phrase": "/fs-review"}, "that is no slash command"),
        ({"allowed_bots": "coder"}, "allowed_bots: give App logins as GitHub shows them, ending in [bot]"),
    ],
)
def test_bad_policy_inputs_are_refused_by_name(inputs: dict[str, str], says: str) -> None:
    with pytest.raises(ValueError) as caught:
        P.read_policy(inputs)
    assert says in str(caught.value)


# --- the trigger phrase -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "stage", "rule"),
    [
        ("@fullsend review please re-check", "review", RULE_COMMAND),
        ("@FullSend Review", "review", RULE_COMMAND),
        ("@fullsend fix\nthe second line", "fix", RULE_COMMAND),
        ("@fullsend retro", "retro", RULE_COMMAND),
        ("@fullsend code", "", "route-wrong-item"),  # the command's own rules still hold
        ("@fullsend deploy", "", RULE_NO_COMMAND),
        ("@fullsend", "", RULE_NO_COMMAND),
        ("please @fullsend review", "", RULE_NO_COMMAND),  # the first word only
        ("/fs-review as before", "review", RULE_COMMAND),
    ],
)
def test_the_trigger_phrase_names_a_stage_command(body: str, stage: str, rule: str) -> None:
    decision, _ = decided(comment(body, "wendy"), trigger_phrase="@fullsend")
    assert (decision.stage, decision.rule) == (stage, rule), decision.reason


def test_the_trigger_phrase_keeps_the_commands_floor() -> None:
    decision, asked = decided(comment("@fullsend fix now", "tom"), trigger_phrase="@fullsend")
    assert (decision.stage, decision.rule, asked) == ("", RULE_ROLE_LOW, ["tom"])
    assert "/fs-fix on a pull request by @tom needs the write role" in decision.reason


def test_without_a_trigger_phrase_the_phrase_is_ordinary_text() -> None:
    decision, asked = decided(comment("@fullsend review", "wendy"))
    assert (decision.stage, decision.rule, asked) == ("", RULE_NO_COMMAND, [])


def test_the_rewrite_touches_only_comments_that_start_with_the_phrase() -> None:
    event = comment("@fullsend review the migration\nand the tests", "wendy")
    assert P.with_trigger_phrase(event, "@fullsend").comment_body == "/fs-review the migration\nand the tests"
    other = dataclasses.replace(event, name="issues")
    assert P.with_trigger_phrase(other, "@fullsend") is other
    thread = dataclasses.replace(event, name="pull_request_review_comment")
    assert P.with_trigger_phrase(thread, "@fullsend").comment_body == "/fs-review the migration\nand the tests"
    assert P.with_trigger_phrase(event, "") is event


# --- allowed users ------------------------------------------------------------------------------
def test_a_user_outside_allowed_users_is_refused_before_any_role_read() -> None:
    decision, asked = decided(comment("/fs-review", "wendy"), allowed_users="tom")
    assert (decision.stage, decision.rule, asked) == ("", P.RULE_USER_NOT_ALLOWED, [])
    assert decision.reason == "@wendy is not in allowed_users, so no event of theirs starts a stage; no stage"


def test_a_listed_user_still_needs_the_role() -> None:
    assert decided(comment("/fs-review", "tom"), allowed_users="Tom")[0].stage == "review"
    decision, asked = decided(comment("/fs-fix", "tom"), allowed_users="tom")
    assert (decision.stage, decision.rule, asked) == ("", RULE_ROLE_LOW, ["tom"])


# --- allowed bots -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("author", "allowed", "stage", "rule"),
    [
        ("coder[bot]", "", "review", RULE_ITEM_EVENT),
        ("coder[bot]", "coder[bot]", "review", RULE_ITEM_EVENT),
        ("other[bot]", "coder[bot]", "", P.RULE_BOT_NOT_ALLOWED),
    ],
)
def test_an_app_admitted_for_being_an_app_must_be_listed(author: str, allowed: str, stage: str, rule: str) -> None:
    decision, asked = decided(pr_opened(author, app=True), allowed_bots=allowed)
    assert (decision.stage, decision.rule, asked) == (stage, rule, [])


def test_allowed_bots_does_not_touch_a_person_whose_role_was_read() -> None:
    decision, asked = decided(pr_opened("tom", app=False), allowed_bots="coder[bot]")
    assert (decision.stage, asked) == ("review", ["tom"])


@pytest.mark.parametrize(
    ("event", "env", "app"),
    [
        ("pull_request_target", {"ACTION": "closed", "SENDER": "merger[bot]", "SENDER_TYPE": "Bot"}, "merger[bot]"),
        (
            "issues",
            {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "triager[bot]", "SENDER_TYPE": "Bot"},
            "triager[bot]",
        ),
        ("issues", {"ACTION": "labeled", "LABEL": "ready-for-triage", "SENDER": "x[bot]", "SENDER_TYPE": "Bot"}, ""),
        ("pull_request_target", {"ACTION": "opened", "PR_AUTHOR": "tom", "IS_PR": "true"}, ""),
    ],
)
def test_the_app_a_decision_trusts(event: str, env: dict[str, str], app: str) -> None:
    assert P.trusted_app(route_event(event, payload(event, **env), REPO), P.RoutePolicy()) == app


# --- enabled stages -----------------------------------------------------------------------------
def test_a_stage_outside_stages_is_refused_before_any_role_read() -> None:
    decision, asked = decided(comment("/fs-fix now", "wendy"), stages="review")
    assert (decision.stage, decision.rule, asked) == ("", P.RULE_STAGE_OFF, [])
    assert decision.reason == (
        "the event would select fix (route-command), which this repository has not enabled (stages: review); no stage"
    )


@pytest.mark.parametrize(
    ("stage", "enabled", "kept"),
    [
        ("fix", frozenset({"review"}), False),
        ("review", frozenset({"review"}), True),
        ("", frozenset({"review"}), True),
        ("triage", None, True),
        ("triage", frozenset(), False),
    ],
)
def test_only_enabled_stages_are_selected(stage: str, enabled: frozenset[str] | None, kept: bool) -> None:
    decision = RouteDecision(stage, RULE_COMMAND if stage else RULE_NO_COMMAND, "why")
    out = P.screen_decision(comment("x", "wendy"), decision, P.RoutePolicy(enabled=enabled), role_read=True)
    if kept:
        assert out == decision
    else:
        listed = ", ".join(s for s in STAGES if s in (enabled or ())) or "none"
        assert out == RouteDecision(
            "",
            P.RULE_STAGE_OFF,
            f"the event would select {stage} (route-command), which this repository has not enabled "
            f"(stages: {listed}); no stage",
        )


def test_every_stage_has_a_command_for_the_trigger_phrase() -> None:
    assert set(P.STAGE_COMMAND) == set(STAGES)
    assert P.STAGE_COMMAND["retro"] == "/fs-retro" and P.STAGE_COMMAND["review"] == "/fs-review"


# --- label and assignee triggers ----------------------------------------------------------------
def labeled(label: str, sender: str, pr: bool, app: bool = False):
    event = "pull_request_target" if pr else "issues"
    env = {"ACTION": "labeled", "LABEL": label, "SENDER": sender, "SENDER_TYPE": "Bot" if app else "User"}
    if pr:
        env.update(IS_PR="true", PR_AUTHOR="author", PR_HEAD_REPO=REPO)
    return route_event(event, payload(event, **env), REPO)


def assigned(assignee: str, sender: str, pr: bool):
    event = "pull_request_target" if pr else "issues"
    data = payload(event, ACTION="assigned", SENDER=sender, IS_PR="true" if pr else "false", PR_HEAD_REPO=REPO)
    data["assignee"] = {"login": assignee}
    return route_event(event, data, REPO)


def test_the_trigger_lists_are_read_and_checked() -> None:
    policy = P.read_policy({"label_triggers": "AI:Review=review, ai-fix = fix", "assignee_triggers": "@Coder-Bot=code"})
    assert policy.label_triggers == (("ai:review", "review"), ("ai-fix", "fix"))
    assert policy.assignee_triggers == (("coder-bot", "code"),)
    for bad in ("ai-review", "ai=deploy", "=review"):
        with pytest.raises(ValueError, match="label_triggers entry"):
            P.read_policy({"label_triggers": bad})


@pytest.mark.parametrize(
    ("label", "who", "pr", "app", "stage", "rule", "asked"),
    [
        ("ai:review", "tom", True, False, "review", "route-label", ["tom"]),
        ("AI:REVIEW", "tom", True, False, "review", "route-label", ["tom"]),
        ("ai:fix", "tom", True, False, "", RULE_ROLE_LOW, ["tom"]),  # fix needs write
        ("ai:fix", "wendy", True, False, "fix", "route-label", ["wendy"]),
        ("ai:review", "tom", False, False, "", "route-wrong-item", []),
        ("ai:review", "coder[bot]", True, True, "review", "route-label", []),
        ("other", "wendy", True, False, "", "route-not-routed", []),
        ("ready-for-review", "stranger", True, False, "review", "route-label", []),  # the built-in label as before
    ],
)
def test_a_configured_label_selects_its_stage_under_the_commands_floor(
    label: str, who: str, pr: bool, app: bool, stage: str, rule: str, asked: list[str]
) -> None:
    decision, read = decided(labeled(label, who, pr, app), label_triggers="ai:review=review,ai:fix=fix")
    assert (decision.stage, decision.rule, read) == (stage, rule, asked), decision.reason


def test_an_app_adding_a_configured_label_must_be_listed_in_allowed_bots() -> None:
    inputs = {"label_triggers": "ai:review=review", "allowed_bots": "coder[bot]"}
    assert decided(labeled("ai:review", "other[bot]", True, app=True), **inputs)[0].rule == P.RULE_BOT_NOT_ALLOWED
    assert decided(labeled("ai:review", "coder[bot]", True, app=True), **inputs)[0].stage == "review"
    # a label no trigger names is not an App's privilege: allowed_bots leaves it alone
    assert decided(labeled("ready-for-triage", "other[bot]", False, app=True), **inputs)[0].stage == "triage"


@pytest.mark.parametrize(
    ("assignee", "who", "pr", "stage", "rule", "asked"),
    [
        ("coder-bot", "wendy", False, "code", "route-assigned", ["wendy"]),
        ("Coder-Bot", "wendy", False, "code", "route-assigned", ["wendy"]),
        ("coder-bot", "tom", False, "", RULE_ROLE_LOW, ["tom"]),  # code needs write
        ("coder-bot", "wendy", True, "", "route-wrong-item", []),
        ("someone", "wendy", False, "", "route-not-routed", []),
    ],
)
def test_assigning_a_configured_login_selects_its_stage(
    assignee: str, who: str, pr: bool, stage: str, rule: str, asked: list[str]
) -> None:
    decision, read = decided(assigned(assignee, who, pr), assignee_triggers="coder-bot=code")
    assert (decision.stage, decision.rule, read) == (stage, rule, asked), decision.reason
    if stage:
        assert decision.reason == f"assigning @{assignee} by @{who} (role write) selects code"


# --- the review App -----------------------------------------------------------------------------
def changes_requested(reviewer: str):
    data = payload(
        "pull_request_review",
        ACTION="submitted",
        IS_PR="true",
        PR_AUTHOR="coder[bot]",
        PR_AUTHOR_TYPE="Bot",
        PR_HEAD_REPO=REPO,
        REVIEW_STATE="changes_requested",
        REVIEW_AUTHOR=reviewer,
    )
    return route_event("pull_request_review", data, REPO)


@pytest.mark.parametrize(
    ("reviewer", "review_app", "stage", "rule"),
    [
        ("org-review[bot]", "", "fix", "route-review-fix"),  # empty: the <owner>-review convention
        ("acme-agent[bot]", "", "", "route-review-ignored"),
        ("acme-agent[bot]", "acme-agent[bot]", "fix", "route-review-fix"),
        ("Acme-Agent[bot]", "@acme-agent[bot]", "fix", "route-review-fix"),  # logins compare without case
        ("org-review[bot]", "acme-agent[bot]", "", "route-review-ignored"),  # the input replaces the convention
    ],
)
def test_the_review_app_input_names_the_app_whose_review_starts_a_fix(
    reviewer: str, review_app: str, stage: str, rule: str
) -> None:
    """docs/rules.md#route-review-ignored."""
    decision, asked = decided(changes_requested(reviewer), review_app=review_app)
    assert (decision.stage, decision.rule, asked) == (stage, rule, [])
    if rule == "route-review-ignored":
        assert f"@{(review_app or 'org-review[bot]').lstrip('@')}" in decision.reason


@pytest.mark.parametrize("review_app", ["acme-agent", "two words[bot]"])
def test_a_review_app_that_is_not_an_app_login_is_refused_by_name(review_app: str) -> None:
    with pytest.raises(ValueError) as caught:
        P.read_policy({"review_app": review_app})
    assert str(caught.value).startswith(f"review_app {review_app!r}: give the App's login")
