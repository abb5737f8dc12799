"""Own-output exclusion (docs/architecture.md "Own output")."""

from __future__ import annotations

import pytest

from fullsend.core.delta.ownoutput import is_own_output

SELF = frozenset(["fullsend-ai-review[bot]", "org-review[bot]", "fullsend-ai-review[bot]"])
STATUS = "<!-- fullsend:agent-status:run-1 -->\nStarted"
RECEIPT = "<!-- fullsend:steer consumed=101 head=abc -->\n_absorbed_"


@pytest.mark.parametrize(
    "login, is_app, body, rule",
    [
        ("fullsend-ai-review[bot]", True, STATUS, "self-login"),
        ("Fullsend-AI-Review[Bot]", True, "plain", "self-login"),
        ("org-review[bot]", True, "plain", "self-login"),
        ("github-actions[bot]", True, RECEIPT, "app-marker"),
        ("acme-coder[bot]", True, STATUS, "app-marker"),
        ("coderabbitai[bot]", True, "consider a nil check", None),
        ("acme-coder[bot]", True, "Opened #9", None),
        ("reviewer", False, "> " + STATUS + "\nplease redo", None),
        ("fullsend-ai-review", False, STATUS, None),
        ("acme-bot", False, RECEIPT, None),
        ("", False, RECEIPT, None),
    ],
    ids=[
        "own-app-status",
        "case-insensitive",
        "org-review",
        "job-token-receipt",
        "unnamed-app-marker",
        "foreign-app",
        "own-app-no-marker-unnamed",
        "human-quoting-marker",
        "user-named-like-app",
        "user-named-bot",
        "empty-login",
    ],
)
def test_16_10_own_output(login, is_app, body, rule):
    assert is_own_output(login, is_app, body, SELF) == rule


@pytest.mark.parametrize("body", ["<!--fullsend:x -->", "<!--  FullSend\n :status -->", "text <!--\tfullsend\t:x"])
def test_marker_whitespace_and_case(body):
    assert is_own_output("some-app[bot]", True, body, SELF) == "app-marker"


@pytest.mark.parametrize("body", ["<!-- fullsend -->", "<! -- fullsend:x", "fullsend: x", "<!-- full send:x"])
def test_not_a_marker(body):
    assert is_own_output("some-app[bot]", True, body, SELF) is None


def test_login_without_bot_suffix_matches_a_bot_self_login():
    # A Bot author may be spelled without [bot] (GraphQL); a User of that name never matches.
    assert is_own_output("fullsend-ai-review", True, "plain", SELF) == "self-login"
    assert is_own_output("fullsend-ai-review", False, "plain", SELF) is None


def test_user_self_login_matches_the_user():
    assert is_own_output("Runner-User", False, "plain", frozenset({"runner-user"})) == "self-login"
