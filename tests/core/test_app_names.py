"""The adopter's two App names, derived from the owner (``fullsend.core.app_names``): GitHub's 34
characters, unique per owner, and Route's default ``review_app`` is the review App's login."""

from __future__ import annotations

import hashlib

import pytest

from fullsend.core.app_names import (
    APP_NAME_MAX_CHARS,
    app_name,
    author_app_name,
    review_app_login,
    review_app_name,
)
from fullsend.core.receipt.skips import review_bot_logins
from fullsend.core.route.decision import RULE_REVIEW_FIX, RULE_REVIEW_IGNORED, RouteDecision, decide, default_review_app
from fullsend.core.route.event import Actor, RouteEvent

LONGEST_OWNER = "a" * 20 + "-" + "b" * 18  # 39 characters, GitHub's most for a login


def test_a_short_owner_gives_owner_dash_suffix_in_lower_case() -> None:
    assert author_app_name("Acme") == "acme-fullsend"
    assert review_app_name("Acme") == "acme-review"
    assert review_app_login("Acme") == "acme-review[bot]"


def test_the_longest_name_that_fits_is_kept_whole() -> None:
    owner = "o" * (APP_NAME_MAX_CHARS - len("-review"))
    assert review_app_name(owner) == owner + "-review" and len(review_app_name(owner)) == APP_NAME_MAX_CHARS


def test_a_long_owner_is_cut_to_34_characters_and_two_owners_with_one_prefix_stay_apart() -> None:
    other = LONGEST_OWNER[:-1] + "c"
    for suffix in ("review", "fullsend"):
        one, two = app_name(LONGEST_OWNER, suffix), app_name(other, suffix)
        assert len(one) == APP_NAME_MAX_CHARS and len(two) == APP_NAME_MAX_CHARS
        assert one != two and one.endswith("-" + suffix) and one.startswith("aaaa")
    assert hashlib.sha256(LONGEST_OWNER.encode()).hexdigest()[:6] == "b9b1da"
    assert review_app_name(LONGEST_OWNER) == "a" * 20 + "-b9b1da-review"
    assert author_app_name(LONGEST_OWNER) == "a" * 18 + "-b9b1da-fullsend"


def test_a_cut_never_leaves_a_double_hyphen() -> None:
    owner = "a" * 17 + "-" + "b" * 21  # the cut for "fullsend" (18 characters) ends on the hyphen
    name = author_app_name(owner)
    assert name == "a" * 17 + "-" + hashlib.sha256(owner.encode()).hexdigest()[:6] + "-fullsend"


@pytest.mark.parametrize("owner", ["", " ", "-acme", "ac me", "acme/widgets", "a" * 40, "ācme"])
def test_an_owner_that_is_no_login_is_refused(owner: str) -> None:
    with pytest.raises(ValueError, match="is not a GitHub user or organization login"):
        app_name(owner, "review")
    assert review_app_login(owner) == ""


def test_routes_default_review_app_and_the_receipt_readers_are_the_review_apps_login() -> None:
    assert default_review_app("Acme") == "acme-review[bot]"
    assert default_review_app(LONGEST_OWNER) == review_app_name(LONGEST_OWNER) + "[bot]"
    assert review_bot_logins((), LONGEST_OWNER) == (review_app_login(LONGEST_OWNER), "fullsend-ai-review[bot]")
    assert review_bot_logins((), "") == ("fullsend-ai-review[bot]",)


def _review_event(repository: str, reviewer: str) -> RouteEvent:
    app = Actor("acme-fullsend[bot]", "Bot")
    return RouteEvent(
        "pull_request_review",
        repository,
        action="submitted",
        sender=Actor(reviewer, "Bot"),
        is_pull_request=True,
        pr_author=app,
        pr_head_repo=repository,
        review_state="changes_requested",
        review_author=reviewer,
    )


def test_a_long_owners_review_app_starts_fix_by_default() -> None:
    repository = f"{LONGEST_OWNER}/widgets"
    decided = decide(_review_event(repository, review_app_login(LONGEST_OWNER)))
    assert isinstance(decided, RouteDecision) and (decided.stage, decided.rule) == ("fix", RULE_REVIEW_FIX)


def test_with_no_owner_an_authorless_review_starts_nothing() -> None:
    decided = decide(_review_event("", ""))
    assert isinstance(decided, RouteDecision) and (decided.stage, decided.rule) == ("", RULE_REVIEW_IGNORED)
