"""The run's facts as the env file and the app read them: the run head, the steer budget, self
logins, the run id and the run-name (docs/architecture.md "Sandbox environment")."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.context import GitHubContext, head_sha_from_event
from fullsend.core.model import Repo, WorkItem
from fullsend.core.receipt.skips import review_bot_logins
from fullsend.core.watch.settle import watch_deadline


@pytest.mark.parametrize(
    ("event", "head"),
    [
        ({"pull_request": {"head": {"sha": "gh123"}}}, "gh123"),  # 151
        ({"inputs": {"event_payload": json.dumps({"pull_request": {"head": {"sha": "ev123"}}})}}, "ev123"),  # 152
        ({}, ""),  # 153: never GITHUB_SHA
    ],
)
def test_run_head_comes_from_the_event_never_github_sha(event, head):
    assert head_sha_from_event(event) == head


@pytest.mark.parametrize(("timeout_min", "budget_min"), [(20, 20), (50, 50), (55, 50), (360, 50)])
def test_156_steer_budget(timeout_min, budget_min):
    start = datetime(2026, 9, 4, 8, 30, tzinfo=UTC)
    assert watch_deadline(start, timeout_min) - start == timedelta(minutes=budget_min)


def test_158_self_logins_include_the_review_apps_of_the_owner():
    assert review_bot_logins((), "acme") == ("acme-review[bot]", "fullsend-ai-review[bot]")


@pytest.mark.parametrize(("raw", "run_id"), [("33740015232", 33740015232), ("not-a-number", 0), ("", 0)])
def test_161_run_id(raw, run_id):
    assert GitHubContext(run_id_raw=raw).run_id == run_id


@pytest.mark.parametrize(("repo", "number", "name"), [("org/repo", 7, "org/repo#7"), ("org/repo", 0, "")])
def test_162_run_name(repo, number, name):
    parsed = Repo.parse(repo)
    assert parsed is not None
    assert WorkItem(parsed, number).run_name == name
