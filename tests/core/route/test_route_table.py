"""The Route decision over a table of events × actors × roles (docs/rules.md, family Route).

The first three tables are every row of the retired bash Route job's tests, unchanged but for the
rule id each now also names; the matrix adds every event kind the shim listens to × a user with
and without the role × an App × a fork.  ``route_events.payload`` builds the webhook payload from
the variables the bash read."""

from __future__ import annotations

import pytest

from fullsend.core.route import decision as route
from fullsend.core.route.decision import AskRole, Role, RouteDecision, decide, shown
from fullsend.core.route.event import route_event
from tests.support.route_events import REPO, decided, payload

R = route


def comment(body: str, who: str, pr: bool = False, **env: str) -> dict[str, str]:
    return {"COMMENT_BODY": body, "COMMENT_AUTHOR": who, "IS_PR": "true" if pr else "false", "ACTION": "created", **env}


@pytest.mark.parametrize(
    ("vid", "env", "stage", "rule"),
    [
        ("triage-by-triager-on-issue", comment("/fs-triage look again", "tom"), "triage", R.RULE_COMMAND),
        ("triage-on-pr", comment("/fs-triage relabel", "wendy", pr=True), "triage", R.RULE_COMMAND),
        ("triage-below-floor", comment("/fs-triage x", "rita"), "", R.RULE_ROLE_LOW),
        ("triage-unknown-user", comment("/fs-triage x", "stranger"), "", R.RULE_ROLE_LOW),
        ("code-by-writer-on-issue", comment("/fs-code build it", "wendy"), "code", R.RULE_COMMAND),
        ("code-on-pr-refused", comment("/fs-code build it", "wendy", pr=True), "", R.RULE_WRONG_ITEM),
        ("code-needs-write", comment("/fs-code build it", "tom"), "", R.RULE_ROLE_LOW),
        (
            "review-by-triager-on-pr",
            comment("/fs-review head moved; re-check", "tom", pr=True),
            "review",
            R.RULE_COMMAND,
        ),
        ("review-on-issue-refused", comment("/fs-review x", "ann"), "", R.RULE_WRONG_ITEM),
        ("fix-by-writer", comment("/fs-fix rebase onto main", "wendy", pr=True), "fix", R.RULE_COMMAND),
        ("fix-needs-write", comment("/fs-fix x", "tom", pr=True), "", R.RULE_ROLE_LOW),
        ("fix-on-issue-refused", comment("/fs-fix x", "wendy"), "", R.RULE_WRONG_ITEM),
        ("retro", comment("/fs-retro", "ann", pr=True), "retro", R.RULE_COMMAND),
        ("fullsend-retro", comment("/fullsend retro please", "wendy"), "retro", R.RULE_COMMAND),
        ("fullsend-alone", comment("/fullsend", "wendy"), "", R.RULE_NO_COMMAND),
        ("prioritize", comment("/fs-prioritize lower", "wendy"), "prioritize", R.RULE_COMMAND),
        ("bot-author-never", comment("/fs-fix x", "ann", pr=True, COMMENT_AUTHOR_TYPE="Bot"), "", R.RULE_APP_COMMENT),
        ("crlf-first-line", comment("/fs-review\r\nsecond line", "tom", pr=True), "review", R.RULE_COMMAND),
        ("command-on-second-line", comment("please look\n/fs-fix x", "wendy", pr=True), "", R.RULE_NO_COMMAND),
        ("leading-blanks", comment("   /fs-fix x", "wendy", pr=True), "fix", R.RULE_COMMAND),
        (
            "needs-info-member",
            comment("here are the logs", "rita", ISSUE_LABELS='["needs-info"]'),
            "triage",
            R.RULE_NEEDS_INFO,
        ),
        (
            "needs-info-stranger",
            comment("me too", "stranger", ISSUE_LABELS='["needs-info"]', COMMENT_ASSOCIATION="NONE"),
            "",
            R.RULE_NO_COMMAND,
        ),
        (
            "needs-info-issue-author",
            comment("logs", "author", ISSUE_LABELS='["needs-info"]', COMMENT_ASSOCIATION="NONE"),
            "triage",
            R.RULE_NEEDS_INFO,
        ),
        (
            "needs-info-feature",
            comment("logs", "rita", ISSUE_LABELS='["needs-info", "feature"]'),
            "",
            R.RULE_NO_COMMAND,
        ),
        ("plain-comment", comment("nice work", "wendy"), "", R.RULE_NO_COMMAND),
    ],
)
def test_route_issue_comment(vid: str, env: dict[str, str], stage: str, rule: str) -> None:
    decision, _ = decided("issue_comment", payload("issue_comment", **env))
    assert (decision.stage, decision.rule) == (stage, rule)


@pytest.mark.parametrize(
    ("vid", "event", "env", "stage", "rule"),
    [
        ("issue-opened-triager", "issues", {"ACTION": "opened", "SENDER": "tom"}, "triage", R.RULE_ITEM_EVENT),
        ("issue-edited-reader", "issues", {"ACTION": "edited", "SENDER": "rita"}, "", R.RULE_ROLE_LOW),
        (
            "label-ready-for-triage",
            "issues",
            {"ACTION": "labeled", "LABEL": "ready-for-triage", "SENDER": "stranger"},
            "triage",
            R.RULE_LABEL,
        ),
        (
            "label-ready-to-code-writer",
            "issues",
            {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "wendy"},
            "code",
            R.RULE_LABEL,
        ),
        (
            "label-ready-to-code-bot",
            "issues",
            {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "x[bot]", "SENDER_TYPE": "Bot"},
            "code",
            R.RULE_LABEL,
        ),
        (
            "label-ready-to-code-reader",
            "issues",
            {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "rita"},
            "",
            R.RULE_ROLE_LOW,
        ),
        (
            "pr-opened-triager",
            "pull_request_target",
            {"ACTION": "opened", "PR_AUTHOR": "tom", "IS_PR": "true"},
            "review",
            R.RULE_ITEM_EVENT,
        ),
        (
            "pr-sync-bot",
            "pull_request_target",
            {"ACTION": "synchronize", "PR_AUTHOR": "dep[bot]", "PR_AUTHOR_TYPE": "Bot", "IS_PR": "true"},
            "review",
            R.RULE_ITEM_EVENT,
        ),
        (
            "pr-opened-reader",
            "pull_request_target",
            {"ACTION": "opened", "PR_AUTHOR": "rita", "IS_PR": "true"},
            "",
            R.RULE_ROLE_LOW,
        ),
        (
            "pr-labeled-ready",
            "pull_request_target",
            {"ACTION": "labeled", "LABEL": "ready-for-review", "IS_PR": "true"},
            "review",
            R.RULE_LABEL,
        ),
        (
            "pr-closed-by-triager",
            "pull_request_target",
            {"ACTION": "closed", "SENDER": "tom", "IS_PR": "true"},
            "retro",
            R.RULE_ITEM_EVENT,
        ),
        (
            "pr-closed-by-app",
            "pull_request_target",
            {"ACTION": "closed", "SENDER": "x[bot]", "SENDER_TYPE": "Bot", "IS_PR": "true"},
            "retro",
            R.RULE_ITEM_EVENT,
        ),
        (
            "pr-closed-by-its-reader-author",
            "pull_request_target",
            {"ACTION": "closed", "SENDER": "rita", "IS_PR": "true"},
            "",
            R.RULE_ROLE_LOW,
        ),
        (
            "pr-closed-by-stranger",
            "pull_request_target",
            {"ACTION": "closed", "SENDER": "stranger", "IS_PR": "true"},
            "",
            R.RULE_ROLE_LOW,
        ),
        (
            "pr-unlabeled",
            "pull_request_target",
            {"ACTION": "unlabeled", "LABEL": "ready-for-review", "IS_PR": "true"},
            "",
            R.RULE_NOT_ROUTED,
        ),
    ],
)
def test_route_item_events(vid: str, event: str, env: dict[str, str], stage: str, rule: str) -> None:
    decision, _ = decided(event, payload(event, **env))
    assert (decision.stage, decision.rule) == (stage, rule)


def review(**env: str) -> dict[str, str]:
    return {
        "ACTION": "submitted",
        "IS_PR": "true",
        "REVIEW_STATE": "changes_requested",
        "REVIEW_AUTHOR": "org-review[bot]",
        "PR_HEAD_REPO": "org/repo",
        "PR_AUTHOR": "coder[bot]",
        "PR_AUTHOR_TYPE": "Bot",
        "ISSUE_LABELS": "null",
        "PR_LABELS": "[]",
        **env,
    }


@pytest.mark.parametrize(
    ("vid", "env", "stage", "rule"),
    [
        ("bot-pr", review(), "fix", R.RULE_REVIEW_FIX),
        (
            "writer-with-fullsend-fix",
            review(PR_AUTHOR="wendy", PR_AUTHOR_TYPE="User", PR_LABELS='["fullsend-fix"]'),
            "fix",
            R.RULE_REVIEW_FIX,
        ),
        ("writer-without-label", review(PR_AUTHOR="wendy", PR_AUTHOR_TYPE="User"), "", R.RULE_FIX_NOT_OPTED_IN),
        ("no-fix-label", review(PR_LABELS='["fullsend-no-fix"]'), "", R.RULE_NO_FIX_LABEL),
        ("fork-head", review(PR_HEAD_REPO="fork/repo"), "", R.RULE_FORK_HEAD),
        ("approved", review(REVIEW_STATE="approved"), "", R.RULE_REVIEW_IGNORED),
        ("other-reviewer", review(REVIEW_AUTHOR="coderabbitai[bot]"), "", R.RULE_REVIEW_IGNORED),
    ],
)
def test_route_review_submitted(vid: str, env: dict[str, str], stage: str, rule: str) -> None:
    decision, _ = decided("pull_request_review", payload("pull_request_review", **env))
    assert (decision.stage, decision.rule) == (stage, rule)


# --- the matrix: every event kind the shim listens to × actor ----------------------------------
#: ann: admin · tom: triage · rita: read · stranger: no role · app: x[bot], an App
ACTORS = ("ann", "tom", "rita", "stranger", "app")


def _who(actor: str) -> tuple[str, str]:
    return ("x[bot]", "Bot") if actor == "app" else (actor, "User")


def _sender(action: str, **env: str):
    def make(actor: str) -> dict[str, str]:
        login, kind = _who(actor)
        return {"ACTION": action, "SENDER": login, "SENDER_TYPE": kind, **env}

    return make


def _commenter(body: str, pr: bool):
    def make(actor: str) -> dict[str, str]:
        login, kind = _who(actor)
        return comment(body, login, pr=pr, COMMENT_AUTHOR_TYPE=kind)

    return make


def _thread_reply(body: str, head: str = REPO):
    """A reply in a review thread (``pull_request_review_comment`` created) by the actor."""

    def make(actor: str) -> dict[str, str]:
        login, kind = _who(actor)
        return {**comment(body, login, COMMENT_AUTHOR_TYPE=kind), "PR_AUTHOR": "wendy", "PR_HEAD_REPO": head}

    return make


def _pr_author(action: str, head: str = REPO):
    def make(actor: str) -> dict[str, str]:
        login, kind = _who(actor)
        return {
            "ACTION": action,
            "IS_PR": "true",
            "PR_AUTHOR": login,
            "PR_AUTHOR_TYPE": kind,
            "PR_HEAD_REPO": head,
            "SENDER": login,
            "SENDER_TYPE": kind,
        }

    return make


def _reviewed(head: str = REPO):
    def make(actor: str) -> dict[str, str]:
        login, kind = _who(actor)
        return review(PR_AUTHOR=login, PR_AUTHOR_TYPE=kind, PR_HEAD_REPO=head, PR_LABELS='["fullsend-fix"]')

    return make


#: (event, env for an actor, the stage for each of ACTORS)
MATRIX = {
    "issue-opened": ("issues", _sender("opened"), ("triage", "triage", "", "", "")),
    "issue-edited": ("issues", _sender("edited"), ("triage", "triage", "", "", "")),
    "issue-labeled-ready-for-triage": ("issues", _sender("labeled", LABEL="ready-for-triage"), ("triage",) * 5),
    "issue-labeled-ready-to-code": ("issues", _sender("labeled", LABEL="ready-to-code"), ("code", "", "", "", "code")),
    "issue-labeled-other": ("issues", _sender("labeled", LABEL="bug"), ("",) * 5),
    "comment-triage-on-issue": ("issue_comment", _commenter("/fs-triage", False), ("triage", "triage", "", "", "")),
    "comment-code-on-issue": ("issue_comment", _commenter("/fs-code", False), ("code", "", "", "", "")),
    "comment-retro-on-issue": ("issue_comment", _commenter("/fs-retro", False), ("retro", "", "", "", "")),
    "comment-prioritize-on-issue": (
        "issue_comment",
        _commenter("/fs-prioritize", False),
        ("prioritize", "", "", "", ""),
    ),
    "comment-review-on-pr": ("issue_comment", _commenter("/fs-review", True), ("review", "review", "", "", "")),
    "comment-fix-on-pr": ("issue_comment", _commenter("/fs-fix", True), ("fix", "", "", "", "")),
    "comment-fullsend-retro-on-pr": ("issue_comment", _commenter("/fullsend retro", True), ("retro", "", "", "", "")),
    "pr-opened": ("pull_request_target", _pr_author("opened"), ("review", "review", "", "", "review")),
    "pr-synchronize": ("pull_request_target", _pr_author("synchronize"), ("review", "review", "", "", "review")),
    "pr-ready-for-review": (
        "pull_request_target",
        _pr_author("ready_for_review"),
        ("review", "review", "", "", "review"),
    ),
    "fork-pr-opened": (
        "pull_request_target",
        _pr_author("opened", "fork/repo"),
        ("review", "review", "", "", "review"),
    ),
    "fork-pr-synchronize": (
        "pull_request_target",
        _pr_author("synchronize", "fork/repo"),
        ("review", "review", "", "", "review"),
    ),
    "pr-closed": ("pull_request_target", _pr_author("closed"), ("retro", "retro", "", "", "retro")),
    "fork-pr-closed": ("pull_request_target", _pr_author("closed", "fork/repo"), ("retro", "retro", "", "", "retro")),
    "pr-labeled-ready-for-review": (
        "pull_request_target",
        lambda a: {**_pr_author("labeled")(a), "LABEL": "ready-for-review"},
        ("review",) * 5,
    ),
    "pr-unlabeled": (
        "pull_request_target",
        lambda a: {**_pr_author("unlabeled")(a), "LABEL": "ready-for-review"},
        ("",) * 5,
    ),
    "review-changes-requested": ("pull_request_review", _reviewed(), ("fix", "", "", "", "fix")),
    "fork-review-changes-requested": ("pull_request_review", _reviewed("fork/repo"), ("",) * 5),
    "thread-fix": ("pull_request_review_comment", _thread_reply("/fs-fix guard this"), ("fix", "", "", "", "")),
    "thread-review": ("pull_request_review_comment", _thread_reply("/fs-review"), ("review", "review", "", "", "")),
    "thread-code": ("pull_request_review_comment", _thread_reply("/fs-code"), ("",) * 5),
    "thread-plain": ("pull_request_review_comment", _thread_reply("why is this None?"), ("",) * 5),
    "fork-thread-fix": ("pull_request_review_comment", _thread_reply("/fs-fix", "fork/repo"), ("",) * 5),
    "fork-thread-review": (
        "pull_request_review_comment",
        _thread_reply("/fs-review", "fork/repo"),
        ("review", "review", "", "", ""),
    ),
}
CASES = [
    (name, actor, stage) for name, (_, _, stages) in MATRIX.items() for actor, stage in zip(ACTORS, stages, strict=True)
]


@pytest.mark.parametrize(("kind", "actor", "stage"), CASES, ids=[f"{k}-{a}" for k, a, _ in CASES])
def test_every_event_kind_by_every_actor(kind: str, actor: str, stage: str) -> None:
    event, env, _ = MATRIX[kind]
    decision, asked = decided(event, payload(event, **env(actor)))
    assert decision.stage == stage, decision.reason
    assert len(asked) <= 1 and decision.rule in route.ROUTE_RULE_IDS
    assert decision.reason and f"[{decision.rule}]" not in decision.reason


def test_the_matrix_covers_every_event_and_action_the_shim_listens_to() -> None:
    """The shim's triggers (examples/fullsend.yml, tests/cli/test_examples.py) each have a row."""
    covered = {(event, env("ann")["ACTION"]) for event, env, _ in MATRIX.values()}
    shim = (
        {("issues", a) for a in ("opened", "edited", "labeled")}
        | {("issue_comment", "created")}
        | {
            ("pull_request_target", a)
            for a in ("opened", "synchronize", "ready_for_review", "closed", "labeled", "unlabeled")
        }
        | {("pull_request_review", "submitted")}
        | {("pull_request_review_comment", "created")}
    )
    assert shim <= covered


def test_an_app_never_needs_a_role_where_the_bash_let_apps_through() -> None:
    for event, env in (
        ("pull_request_target", _pr_author("opened")("app")),
        ("pull_request_target", _pr_author("closed")("app")),
        ("issues", _sender("labeled", LABEL="ready-to-code")("app")),
        ("pull_request_review", review()),
        ("issue_comment", _commenter("/fs-fix", True)("app")),
    ):
        assert decided(event, payload(event, **env))[1] == []


# --- edges --------------------------------------------------------------------------------------
def test_a_role_that_cannot_be_read_fails_closed() -> None:
    event = route_event("issue_comment", payload("issue_comment", **comment("/fs-review", "ann", pr=True)), REPO)
    assert decide(event) == AskRole("ann")
    decision = decide(event, Role("ann", "none", unreadable="GET …/permission: 502 Bad Gateway"))
    assert isinstance(decision, RouteDecision)
    assert (decision.stage, decision.rule) == ("", R.RULE_ROLE_UNREADABLE) and "502 Bad Gateway" in decision.reason


def test_a_role_for_another_login_is_asked_again() -> None:
    event = route_event("issue_comment", payload("issue_comment", **comment("/fs-review", "ann", pr=True)), REPO)
    assert decide(event, Role("tom", "admin")) == AskRole("ann")


@pytest.mark.parametrize("role_name", ["read", "none", "custom-reviewer", "", "ADMIN"])
def test_only_the_named_roles_reach_a_floor(role_name: str) -> None:
    decision, _ = decided("issue_comment", payload("issue_comment", **comment("/fs-triage", "eve")), {"eve": role_name})
    assert (decision.stage, decision.rule) == ("", R.RULE_ROLE_LOW)


@pytest.mark.parametrize(
    ("role_name", "stage"), [("admin", "fix"), ("maintain", "fix"), ("write", "fix"), ("triage", "")]
)
def test_the_write_floor(role_name: str, stage: str) -> None:
    decision, _ = decided(
        "issue_comment", payload("issue_comment", **comment("/fs-fix", "eve", pr=True)), {"eve": role_name}
    )
    assert decision.stage == stage


def test_an_empty_login_has_no_role_and_is_not_asked_for() -> None:
    decision, asked = decided("issues", payload("issues", ACTION="opened", SENDER=""))
    assert (decision.stage, decision.rule, asked) == ("", R.RULE_ROLE_LOW, [])


@pytest.mark.parametrize(
    ("body", "stage"),
    [
        ("/fs-review\tnow", "review"),
        ("\t/fs-review", "review"),
        ("/fs-review\r", "review"),
        ("/fs-re\rview", "review"),
        ("/FS-REVIEW", ""),
        ("/fs-review\u00a0x", ""),
        ("", ""),
        ("\n/fs-review", ""),
        ("/fullsend  retro", "retro"),
    ],
)
def test_the_command_word_splits_like_bash_read(body: str, stage: str) -> None:
    decision, _ = decided("issue_comment", payload("issue_comment", **comment(body, "ann", pr=True)))
    assert decision.stage == stage


@pytest.mark.parametrize("event", ["push", "pull_request", "workflow_dispatch", ""])
def test_an_event_the_shim_does_not_send_selects_nothing(event: str) -> None:
    decision = decide(route_event(event, {"action": "opened"}, REPO))
    assert isinstance(decision, RouteDecision) and (decision.stage, decision.rule) == ("", R.RULE_NOT_ROUTED)


def test_a_payload_of_the_wrong_shapes_reads_as_empty() -> None:
    event = route_event(
        "issue_comment",
        {
            "comment": "x",
            "issue": {"labels": [1, {"name": 2}, {"name": "needs-info"}], "pull_request": None},
            "sender": [],
        },
        REPO,
    )
    assert event.labels == ("needs-info",) and not event.is_pull_request and event.comment_body == ""


def test_untrusted_text_is_quoted_and_cut() -> None:
    assert shown("a\nb") == "'a\\nb'"
    assert len(shown("x" * 500)) < 70
    decision = decide(route_event("issues", {"action": "labeled", "label": {"name": "::error::x\n" + "y" * 200}}, REPO))
    assert isinstance(decision, RouteDecision) and "\n" not in decision.reason and len(decision.reason) < 200


@pytest.mark.parametrize(
    ("vid", "env", "stage", "rule", "asked"),
    [
        ("reply-fix-by-writer", _thread_reply("/fs-fix cover None")("wendy"), "fix", R.RULE_COMMAND, ["wendy"]),
        ("reply-fix-needs-write", _thread_reply("/fs-fix cover None")("tom"), "", R.RULE_ROLE_LOW, ["tom"]),
        ("reply-by-app", _thread_reply("/fs-fix x")("app"), "", R.RULE_APP_COMMENT, []),
        ("reply-fix-on-fork", _thread_reply("/fs-fix x", "fork/repo")("wendy"), "", R.RULE_FORK_HEAD, []),
        ("reply-code-wrong-item", _thread_reply("/fs-code x")("wendy"), "", R.RULE_WRONG_ITEM, []),
        ("reply-plain", _thread_reply("looks odd")("wendy"), "", R.RULE_NO_COMMAND, []),
        ("reply-edited", {**_thread_reply("/fs-fix x")("wendy"), "ACTION": "edited"}, "", R.RULE_NOT_ROUTED, []),
    ],
)
def test_route_review_thread_comment(vid: str, env: dict[str, str], stage: str, rule: str, asked: list[str]) -> None:
    """docs/rules.md#route-command: a review-thread comment commands like a PR comment."""
    decision, read = decided("pull_request_review_comment", payload("pull_request_review_comment", **env))
    assert (decision.stage, decision.rule, read) == (stage, rule, asked), decision.reason
