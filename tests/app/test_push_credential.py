"""Issue 42, the push credential (docs/adopting.md "The push credential"): the environment every
child gets lets git authenticate to the repository's server with the role token, through git's
own configuration variables (no file), and never with the job token.  Checked with real git:
``git credential fill`` answers as a push would be answered."""

from __future__ import annotations

import os
import subprocess

from fullsend.core.tokens.gitpush import COMMITTER, git_push_env
from fullsend.core.tokens.policy import child_env

JOB = "ghs_" + "job-token-of-the-run"  # not a token shape a secret scanner flags
ROLE = "ghs_" + "role-token-of-the-app"


def _fill(env: dict[str, str], host: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in env.items() if not k.startswith("GIT_") or k.startswith("GIT_CONFIG")}
    clean.update(GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_ASKPASS="")
    return subprocess.run(
        ["git", "credential", "fill"],
        input=f"protocol=https\nhost={host}\n\n",
        env=clean,
        capture_output=True,
        text=True,
        timeout=30,
    )


def _child(**base: str) -> dict[str, str]:
    return child_env({"PATH": os.environ["PATH"], "GITHUB_TOKEN": JOB, **base}, JOB, ROLE)


def test_git_answers_the_server_with_the_role_token_and_never_the_job_token() -> None:
    env = _child(GITHUB_SERVER_URL="https://ghes.example.com")
    filled = _fill(env, "ghes.example.com")
    assert filled.returncode == 0, filled.stderr
    assert "username=x-access-token\n" in filled.stdout and f"password={ROLE}\n" in filled.stdout
    assert not any(JOB in v for v in env.values())
    other = _fill(env, "example.org")  # another host gets nothing: git would have to ask
    assert other.returncode != 0 and ROLE not in other.stdout


def test_github_com_is_the_default_server_and_a_committer_is_named() -> None:
    env = _child()
    assert _fill(env, "github.com").stdout.count(f"password={ROLE}") == 1
    got = subprocess.run(
        ["git", "config", "user.name"], env={**env, "GIT_CONFIG_NOSYSTEM": "1"}, capture_output=True, text=True
    )
    assert got.stdout.strip() == COMMITTER[0]


def test_the_steps_own_git_config_entries_keep_their_numbers() -> None:
    added = git_push_env(
        {"GH_TOKEN": ROLE, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.autocrlf", "GIT_AUTHOR_NAME": "me"}
    )
    assert added["GIT_CONFIG_COUNT"] == "3" and "GIT_CONFIG_KEY_0" not in added
    assert added["GIT_CONFIG_KEY_1"] == added["GIT_CONFIG_KEY_2"] == "credential.https://github.com.helper"
    assert added["GIT_CONFIG_VALUE_1"] == ""  # resets any helper configured before


def test_without_a_role_token_there_is_no_credential() -> None:
    env = child_env({"PATH": os.environ["PATH"], "GITHUB_TOKEN": JOB}, JOB, "")
    assert "GIT_CONFIG_COUNT" not in env and "GH_TOKEN" not in env
