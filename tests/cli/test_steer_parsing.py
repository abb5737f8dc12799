"""``fullsend steer`` decisions without the network: URL parsing, API base, command choice, text
and token resolution (docs/architecture.md "Commands")."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fullsend.app.commands.steer import (
    SteerCommandError,
    api_base,
    check_stage,
    choose_command,
    parse_item_url,
    resolve_token,
    steer_body,
)

# --- URL -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host", "repo", "kind", "number"),
    [
        ("https://github.com/org/repo/pull/7", "github.com", "org/repo", "pull", 7),
        ("https://github.com/org/repo/issues/12", "github.com", "org/repo", "issues", 12),
        ("https://github.com/org/repo/pull/7/files#diff-abc", "github.com", "org/repo", "pull", 7),
        ("https://github.com/org/repo/issues/5#issuecomment-99", "github.com", "org/repo", "issues", 5),
        ("https://GitHub.com/Org/my.repo-x/pull/3?tab=commits", "github.com", "Org/my.repo-x", "pull", 3),
        ("http://ghe.example:8443/acme/widgets/pull/44", "ghe.example:8443", "acme/widgets", "pull", 44),
        ("https://ghe.example/prefix/acme/widgets/issues/9", "ghe.example", "acme/widgets", "issues", 9),
        ("https://github.com/org/issues/pull/4", "github.com", "org/issues", "pull", 4),
        ("https://github.com/pull/repo/issues/3", "github.com", "pull/repo", "issues", 3),
        ("  https://github.com/org/repo/pull/7  ", "github.com", "org/repo", "pull", 7),
    ],
)
def test_parse_item_url(url: str, host: str, repo: str, kind: str, number: int) -> None:
    item = parse_item_url(url)
    assert (item.host, item.repo.full_name, item.kind, item.number) == (host, repo, kind, number)


@pytest.mark.parametrize(
    "url",
    [
        "github.com/org/repo/pull/7",  # no scheme
        "ftp://github.com/org/repo/pull/7",
        "https://github.com/org/repo/pull/0",
        "https://github.com/org/repo/pull/-1",
        "https://github.com/org/repo/pulls/7",
        "https://github.com/org/repo/pull/7a",
        "https://github.com/org/repo/pull/",
        "https://github.com/org/repo",
        "https://github.com/repo/pull/7",  # owner missing
        "https://github.com/org/repo/pull/\u0667",  # non-ASCII digit
        "https://github.com/org/repo/pull/2147483648",  # past GitHub's GraphQL Int
        "https://github.com/org/repo/issues/" + "9" * 5000,  # past Python's int digit limit
        "https://github.com/o%2Fx/repo/pull/7",
        "https://",
        "",
    ],
)
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(SteerCommandError) as info:
        parse_item_url(url)
    assert info.value.exit_code == 2
    assert "issue or pull request" in str(info.value)


def test_bad_url_error_does_not_echo_credentials() -> None:
    with pytest.raises(SteerCommandError) as info:
        parse_item_url("https://user:s3cret@github.com/org/repo/nothing")
    assert "s3cret" not in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://gitlab.com/org/repo/-/merge_requests/3",
        "https://gitlab.example.org/g/p/-/issues/2",
        "https://code.example/g/p/-/merge_requests/5",
    ],
)
def test_gitlab_is_recognised_only_to_refuse(url: str) -> None:
    with pytest.raises(SteerCommandError, match="not supported on GitLab") as info:
        parse_item_url(url)
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("url", "env", "expected"),
    [
        ("https://github.com/org/repo/pull/7", {}, "https://api.github.com"),
        ("https://github.com/org/repo/pull/7", {"GITHUB_API_URL": "http://127.0.0.1:9/"}, "http://127.0.0.1:9"),
        ("https://ghe.example/acme/w/pull/7", {}, "https://ghe.example/api/v3"),
        ("http://ghe.example:8080/acme/w/pull/7", {}, "http://ghe.example:8080/api/v3"),
        (
            "https://ghe.example/acme/w/pull/7",
            {"GITHUB_API_URL": "https://ghe.example/api/v3"},
            "https://ghe.example/api/v3",
        ),
    ],
)
def test_api_base(url: str, env: dict, expected: str) -> None:
    assert api_base(parse_item_url(url), env) == expected


# --- commands (vectors 165-170) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("vid", "stage", "is_pr", "text", "body"),
    [
        ("V165-pr-default-review", None, True, "head moved; re-check", "/fs-review head moved; re-check"),
        ("V166-issue-default-triage", None, False, "look at the logs", "/fs-triage look at the logs"),
        ("V167-pr-fix", "fix", True, "rebase onto main", "/fs-fix rebase onto main"),
        ("pr-triage", "triage", True, "re-label", "/fs-triage re-label"),
        ("issue-triage", "triage", False, "re-label", "/fs-triage re-label"),
        ("text-trimmed", None, True, "  \n cover the error path \t", "/fs-review cover the error path"),
        ("multi-line-kept", "fix", True, "do this\nand that", "/fs-fix do this\nand that"),
    ],
)
def test_comment_body(vid: str, stage: str | None, is_pr: bool, text: str, body: str) -> None:
    assert steer_body(choose_command(stage, is_pr), text) == body


@pytest.mark.parametrize("stage", ["fix", "review"])
def test_V168_pull_request_stage_on_issue(stage: str) -> None:
    with pytest.raises(SteerCommandError) as info:
        choose_command(stage, False)
    assert str(info.value) == f"--stage {stage} applies to a pull request, and this is an issue"
    assert info.value.exit_code == 2


@pytest.mark.parametrize("stage", ["bogus", "Review", ""])
def test_V169_unknown_stage(stage: str) -> None:
    with pytest.raises(SteerCommandError) as info:
        check_stage(stage)
    assert str(info.value) == f'--stage must be review, fix or triage, got "{stage}"'


@pytest.mark.parametrize(
    ("stage", "command"), [("code", "/fs-code"), ("retro", "/fs-retro"), ("prioritize", "/fs-prioritize")]
)
def test_V169_a_stage_that_takes_no_steer_says_which_do_and_why(stage: str, command: str) -> None:
    """The action's other stages: the same refusal, then which stages ``steer`` posts for, why,
    and how to steer such a run anyway (issue 15)."""
    with pytest.raises(SteerCommandError) as info:
        check_stage(stage)
    assert info.value.exit_code == 2
    assert str(info.value) == (
        f'--stage must be review, fix or triage, got "{stage}": fullsend steer posts only /fs-review and /fs-fix '
        "on a pull request and /fs-triage on an issue, the stages a person refines while they run; to steer a "
        f"{stage} run in flight, comment '{command} <text>' on the item yourself (its Route job checks your "
        "permission the same way)"
    )


@pytest.mark.parametrize("text", ["   ", "", "\n\t "])
def test_V170_empty_text(text: str) -> None:
    with pytest.raises(SteerCommandError, match="the steer text is empty; say what the agent should do differently"):
        steer_body("/fs-review", text)


# --- token order: GH_TOKEN → GITHUB_TOKEN → gh auth token ------------------------------------


def fake_gh(directory: Path, script: str) -> dict[str, str]:
    """A ``gh`` executable on PATH running ``script`` (sh); returns an env using it."""
    directory.mkdir(parents=True, exist_ok=True)
    gh = directory / "gh"
    gh.write_text("#!/bin/sh\n" + script + "\n")
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{directory}{os.pathsep}/usr/bin:/bin"}


def test_token_order(tmp_path: Path) -> None:
    env = fake_gh(tmp_path / "bin", 'echo "gho_from_gh"')
    assert resolve_token({**env, "GH_TOKEN": "a", "GITHUB_TOKEN": "b"}, "github.com") == "a"
    assert resolve_token({**env, "GH_TOKEN": " ", "GITHUB_TOKEN": "b"}, "github.com") == "b"
    assert resolve_token(env, "github.com") == "gho_from_gh"


def test_gh_is_asked_for_the_urls_host(tmp_path: Path) -> None:
    env = fake_gh(tmp_path / "bin", 'echo "$*" > "$(dirname "$0")/args"; echo tok')
    assert resolve_token(env, "ghe.example") == "tok"
    assert (tmp_path / "bin" / "args").read_text().strip() == "auth token --hostname ghe.example"


@pytest.mark.parametrize(
    ("vid", "script"),
    [("gh-logged-out", 'echo "no oauth token" >&2; exit 1'), ("gh-prints-nothing", "exit 0")],
)
def test_missing_token(tmp_path: Path, vid: str, script: str) -> None:
    env = fake_gh(tmp_path / "bin", script)
    with pytest.raises(SteerCommandError, match="no GitHub token") as info:
        resolve_token(env, "github.com")
    assert info.value.exit_code == 2


def test_missing_token_without_gh(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SteerCommandError, match="GH_TOKEN or GITHUB_TOKEN"):
        resolve_token({"PATH": str(tmp_path / "empty")}, "github.com")
