"""The simulator's git server and the events it emits (fullsend/simulator/git, events, workflows):
GitHub's token rules for git over HTTPS, pull requests that follow their branches, the workflow
runs an event starts from the shim's ``on:``, and the 422 on an author's own review."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from fullsend.simulator.events.emitter import Emitter
from fullsend.simulator.git.pulls import follow_pulls
from fullsend.simulator.git.server import GitServer
from fullsend.simulator.server import GitHubSimulator

WRITER, READER, USER = "ghs_writer_token", "ghs_reader_token", "ghp_user_token"
SHIM = """name: fullsend
run-name: "${{ github.repository }}#${{ github.event.issue.number || github.event.pull_request.number }}\
${{ github.event_name == 'issue_comment' && ' comment:' || '' }}${{ github.event.comment.id }}"
on:
  issue_comment:
    types: [created]
  pull_request_target:
    types: [opened, synchronize]
  pull_request_review:
    types: [submitted]
jobs:
  dispatch:
    uses: fullsend-ai/steer-action/.github/workflows/dispatch.yml@5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e # v0.1.0
"""


@dataclass
class World:
    sim: GitHubSimulator
    git: GitServer
    emitter: Emitter
    work: Path

    def run_git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
        proc = subprocess.run(["git", "-C", str(self.work), *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 0 or not check, proc.stderr
        return proc

    def url(self, token: str = "") -> str:
        url = self.git.url("org", "repo")
        return url.replace("http://", f"http://x-access-token:{token}@") if token else url

    def commit(self, name: str, text: str) -> str:
        (self.work / name).parent.mkdir(parents=True, exist_ok=True)
        (self.work / name).write_text(text)
        self.run_git("add", name)
        self.run_git("-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", f"change {name}")
        return self.run_git("rev-parse", "HEAD").stdout.strip()

    def api(self, method: str, path: str, token: str, **kwargs: object) -> requests.Response:
        return requests.request(
            method,
            f"{self.sim.api_url}/repos/org/repo{path}",
            headers={"Authorization": f"token {token}"},
            timeout=10,
            **kwargs,  # type: ignore[arg-type]
        )


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with GitHubSimulator() as sim:
        git = GitServer(sim, tmp_path / "server")
        sim.extensions.append(git)
        git.create("org", "repo")
        follow_pulls(sim, git)
        emitter = Emitter(sim, git)
        sim.add_token(WRITER, "fixer", "Bot", contents="write")
        sim.add_token(READER, "reviewer-app", "Bot")
        sim.add_token(USER, "author", "User", contents="write")
        work = tmp_path / "work"
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        w = World(sim, git, emitter, work)
        w.commit(".github/workflows/fullsend.yml", SHIM)
        w.run_git("push", w.url(WRITER), "main")
        yield w


def test_a_push_needs_a_token_with_contents_write(world):
    world.run_git("checkout", "-qb", "feature")
    world.commit("a.txt", "one\n")
    anonymous = world.run_git("push", world.url(), "feature", check=False)
    assert anonymous.returncode != 0 and "could not read Username" in anonymous.stderr  # 401: git asks for credentials
    refused = world.run_git("push", world.url(READER), "feature", check=False)
    assert refused.returncode != 0 and "Permission to org/repo.git denied to reviewer-app[bot]." in refused.stderr
    assert "refs/heads/feature" not in world.git.refs("org", "repo")
    world.run_git("push", world.url(WRITER), "feature")
    assert world.git.refs("org", "repo")["refs/heads/feature"] == world.run_git("rev-parse", "HEAD").stdout.strip()
    fetched = world.run_git("ls-remote", world.url(READER), "refs/heads/feature").stdout
    assert fetched.split()[0] == world.run_git("rev-parse", "HEAD").stdout.strip()
    bare_name = world.run_git("ls-remote", world.url(READER).removesuffix(".git"), "refs/heads/feature").stdout
    assert bare_name == fetched  # GitHub serves <owner>/<repo> without .git too


def _open_pull(world: World) -> tuple[int, str]:
    world.run_git("checkout", "-qb", "feature")
    head = world.commit("app.py", "print('hi')\n")
    world.run_git("push", world.url(WRITER), "feature")
    answer = world.api("POST", "/pulls", WRITER, json={"title": "Add app", "head": "feature", "base": "main"})
    assert answer.status_code == 201, answer.text
    return answer.json()["number"], head


def test_opening_a_pull_request_starts_the_shim_with_its_run_name_and_chain(world):
    number, head = _open_pull(world)
    pull = world.sim.get_pull(number)
    assert (pull["head"]["sha"], pull["head"]["ref"], pull["user"]["login"]) == (head, "feature", "fixer[bot]")
    assert world.git.refs("org", "repo")[f"refs/pull/{number}/head"] == head
    [emitted] = world.emitter.runs
    main = world.git.refs("org", "repo")["refs/heads/main"]
    assert (emitted.event, emitted.payload["action"], emitted.payload["number"]) == ("pull_request_target", "opened", 1)
    run = world.sim.get_run(emitted.id)
    assert run["display_title"] == "org/repo#1" and run["path"] == ".github/workflows/fullsend.yml"
    assert (run["status"], run["event"], run["head_sha"], run["actor"]["login"]) == (
        "queued",
        "pull_request_target",
        main,
        "fixer[bot]",
    )
    assert run["referenced_workflows"] == [
        {
            "path": "fullsend-ai/steer-action/.github/workflows/dispatch.yml@5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e",
            "sha": "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e",
        }
    ]
    assert [p["number"] for p in run["pull_requests"]] == [1]


def test_a_push_to_the_head_branch_moves_the_head_and_emits_synchronize(world):
    number, before = _open_pull(world)
    after = world.commit("app.py", "print('hello')\n")
    world.run_git("push", world.url(WRITER), "feature")
    pull = world.sim.get_pull(number)
    assert pull["head"]["sha"] == after and world.git.refs("org", "repo")[f"refs/pull/{number}/head"] == after
    emitted = world.emitter.runs[-1]
    assert (emitted.payload["action"], emitted.payload["before"], emitted.payload["after"]) == (
        "synchronize",
        before,
        after,
    )
    compared = world.api("GET", f"/compare/{before}...{after}", READER).json()
    assert [(f["filename"], f["status"], f["additions"], f["deletions"]) for f in compared["files"]] == [
        ("app.py", "modified", 1, 1)
    ]
    assert "+print('hello')" in compared["files"][0]["patch"]


def test_a_comment_starts_a_run_but_not_one_made_with_the_job_token(world):
    number, _ = _open_pull(world)
    world.sim.add_token("ghs_job", "github-actions", "Bot", read_only=False)
    world.api("POST", f"/issues/{number}/comments", "ghs_job", json={"body": "receipt"})
    assert [r.event for r in world.emitter.runs] == ["pull_request_target"]
    made = world.api("POST", f"/issues/{number}/comments", USER, json={"body": "/fs-fix please"}).json()
    emitted = world.emitter.runs[-1]
    assert (emitted.event, emitted.payload["comment"]["id"]) == ("issue_comment", made["id"])
    assert world.sim.get_run(emitted.id)["display_title"] == f"org/repo#{number} comment:{made['id']}"


def test_an_author_cannot_request_changes_on_its_own_pull_request(world):
    number, head = _open_pull(world)
    review = {"commit_id": head, "body": "Two findings.", "event": "REQUEST_CHANGES"}
    own = world.api("POST", f"/pulls/{number}/reviews", WRITER, json=review)
    assert own.status_code == 422
    assert own.json()["errors"] == ["Review Can not request changes on your own pull request"]
    other = world.api("POST", f"/pulls/{number}/reviews", READER, json=review)
    assert other.status_code == 200 and other.json()["state"] == "CHANGES_REQUESTED"
    emitted = world.emitter.runs[-1]
    assert (emitted.event, emitted.payload["review"]["state"]) == ("pull_request_review", "changes_requested")
    merge = world.git.refs("org", "repo")[f"refs/pull/{number}/merge"]
    assert (emitted.ref, emitted.sha) == (f"refs/pull/{number}/merge", merge)
    assert world.git.git("org", "repo", "rev-parse", f"{merge}^1", f"{merge}^2").split() == [
        world.git.refs("org", "repo")["refs/heads/main"],
        head,
    ]
    assert world.sim.get_run(emitted.id)["head_sha"] == head


def test_an_event_the_shim_does_not_listen_to_starts_nothing(world):
    number, _ = _open_pull(world)
    world.commit(".github/workflows/fullsend.yml", SHIM.replace("[opened, synchronize]", "[opened]"))
    world.run_git("push", world.url(WRITER), "HEAD:main")
    world.run_git("checkout", "-q", "feature")
    world.commit("b.txt", "two\n")
    world.run_git("push", world.url(WRITER), "feature")
    assert [r.payload["action"] for r in world.emitter.runs] == ["opened"]
    assert world.sim.get_pull(number)["head"]["sha"] == world.run_git("rev-parse", "HEAD").stdout.strip()


CHECKOUT = Path(__file__).resolve().parents[2] / "tools" / "act" / "stand-ins" / "checkout" / "main.py"


def _checkout(world: World, workspace: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(workspace.parent),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_SERVER_URL": world.sim.urls.web,
        "GITHUB_REF": "refs/heads/main",
        **{f"STAND_IN_{k.upper()}": v for k, v in inputs.items()},
    }
    return subprocess.run([sys.executable, str(CHECKOUT)], env=env, capture_output=True, text=True, timeout=60)


def test_the_checkout_stand_in_fetches_with_the_token_and_keeps_it_only_when_asked(world, tmp_path):
    number, head = _open_pull(world)
    workspace = tmp_path / "workspace"
    made = _checkout(world, workspace, repository="org/repo", ref=head, token=READER, persist="false")
    assert made.returncode == 0, made.stderr
    assert world.run_git("-C", str(workspace), "rev-parse", "HEAD").stdout.strip() == head
    assert world.run_git("-C", str(workspace), "config", "--get-regexp", "extraheader", check=False).stdout == ""
    refused = _checkout(world, tmp_path / "other", repository="org/repo", ref=head, token="ghs_unknown")
    assert refused.returncode != 0 and "git fetch" in refused.stderr
    kept = _checkout(world, workspace, repository="org/repo", ref="feature", token=WRITER, persist="true")
    assert kept.returncode == 0, kept.stderr
    assert world.run_git("-C", str(workspace), "branch", "--show-current").stdout.strip() == "feature"
    (workspace / "app.py").write_text("print('fixed')\n")
    world.run_git("-C", str(workspace), "-c", "user.name=f", "-c", "user.email=f@invalid", "commit", "-qam", "fix")
    world.run_git("-C", str(workspace), "push", "origin", "HEAD:feature")  # with the persisted header alone
    assert (
        world.sim.get_pull(number)["head"]["sha"]
        == world.run_git("-C", str(workspace), "rev-parse", "HEAD").stdout.strip()
    )


def _agent(workspace: Path, log: Path, work: list[dict], *argv: str, token: str = "", api: str = "") -> None:
    env = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "HOME": str(workspace.parent),
        "GIT_TERMINAL_PROMPT": "0",
        "GH_TOKEN": token,
        "GITHUB_API_URL": api,
        "SCRIPTED_AGENT_TURN_S": "0.1",
        "SCRIPTED_AGENT_LOG": str(log),
        "SCRIPTED_AGENT_WORK": json.dumps(work),
    }
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "Do the task."}})
    proc = subprocess.run(
        [sys.executable, "-m", "fullsend.simulator.agent.main", *argv],
        input=line + "\n",
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def _steps(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if "step" in json.loads(line)]


def test_the_scripted_agent_commits_and_pushes_with_only_the_credential_it_was_given(world, tmp_path):
    number, _ = _open_pull(world)
    work = [
        {"do": "write", "path": "app.py", "text": "print('fixed')\n"},
        {"do": "commit", "message": "Fix the greeting"},
        {"do": "push"},
        {"do": "record"},
    ]
    bare = tmp_path / "bare"
    assert _checkout(world, bare, repository="org/repo", ref="feature", token=WRITER, persist="false").returncode == 0
    _agent(bare, tmp_path / "bare.log", work, token=WRITER)
    write, commit, push, record = _steps(tmp_path / "bare.log")
    assert write["ok"] and commit["ok"] and not push["ok"] and "could not read Username" in push["output"]
    kept = tmp_path / "kept"
    assert _checkout(world, kept, repository="org/repo", ref="feature", token=WRITER, persist="true").returncode == 0
    _agent(kept, tmp_path / "kept.log", work)
    *_, push, record = _steps(tmp_path / "kept.log")
    assert push["ok"], push["output"]
    seen = json.loads(record["output"])
    assert seen["branch"] == "feature" and world.sim.get_pull(number)["head"]["sha"] == seen["head"]


def test_the_scripted_agent_reviews_the_commit_it_reads_and_runs_project_hooks_unless_told_not_to(world, tmp_path):
    number, head = _open_pull(world)
    workspace = tmp_path / "ws"
    assert _checkout(world, workspace, repository="org/repo", ref=head, token=READER).returncode == 0
    (workspace / ".claude").mkdir()
    hook = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch hooked"}]}]}}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(hook))
    review = {
        "do": "review",
        "url": f"{world.sim.urls.web}/org/repo/pull/{number}",
        "event": "REQUEST_CHANGES",
        "body": "One finding.",
        "comments": [{"path": "app.py", "line": 1, "body": "Say hello."}],
    }
    _agent(workspace, tmp_path / "a.log", [review], "--setting-sources", "user", token=READER, api=world.sim.api_url)
    assert not (workspace / "hooked").exists()
    [step] = _steps(tmp_path / "a.log")
    assert step["ok"], step["output"]
    [posted] = world.sim.reviews(number)
    assert (posted["commit_id"], posted["state"], posted["user"]["login"]) == (
        head,
        "CHANGES_REQUESTED",
        "reviewer-app[bot]",
    )
    _agent(workspace, tmp_path / "b.log", [{"do": "record"}], token=READER)
    assert (workspace / "hooked").exists()


def test_opening_an_issue_starts_the_shim_when_it_listens_to_issues(world):
    made = world.api("POST", "/issues", USER, json={"title": "Crash on start", "labels": ["bug"]})
    assert made.status_code == 201 and made.json()["user"]["login"] == "author"
    assert world.emitter.runs == []  # SHIM does not listen to issues
    world.commit(".github/workflows/fullsend.yml", SHIM.replace("on:\n", "on:\n  issues:\n    types: [opened]\n"))
    world.run_git("push", world.url(WRITER), "HEAD:main")
    again = world.api("POST", "/issues", USER, json={"title": "Second"}).json()
    [emitted] = world.emitter.runs
    assert (emitted.event, emitted.payload["issue"]["number"]) == ("issues", again["number"])
    assert world.sim.get_run(emitted.id)["display_title"] == f"org/repo#{again['number']}"
    assert world.api("POST", "/issues", USER, json={"body": "no title"}).status_code == 422


def test_a_public_repository_is_read_without_a_token_and_pushed_by_nobody(world):
    world.git.create("fullsend-ai", "steer-action", public=True)
    url = world.git.url("fullsend-ai", "steer-action")
    world.run_git("push", str(world.git.path("fullsend-ai", "steer-action")), "main:main")
    listed = world.run_git("ls-remote", "--heads", url.removesuffix(".git")).stdout
    assert listed.split() == [world.run_git("rev-parse", "main").stdout.strip(), "refs/heads/main"]
    refused = world.run_git(
        "push", url.replace("http://", f"http://x-access-token:{WRITER}@"), "main:other", check=False
    )
    assert refused.returncode != 0 and "Permission to fullsend-ai/steer-action.git denied" in refused.stderr


WEBHOOKS = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "openapi" / "github-webhooks-trimmed.json").read_text()
)
_HOOK_OF = {
    ("issues", "opened"): "issues-opened",
    ("issue_comment", "created"): "issue-comment-created",
    ("pull_request_target", "opened"): "pull-request-opened",
    ("pull_request_target", "synchronize"): "pull-request-synchronize",
    ("pull_request_review", "submitted"): "pull-request-review-submitted",
}


def test_every_payload_the_simulator_sends_matches_githubs_webhook_schema(world):
    from jsonschema import Draft202012Validator, FormatChecker

    world.commit(".github/workflows/fullsend.yml", SHIM.replace("on:\n", "on:\n  issues:\n    types: [opened]\n"))
    world.run_git("push", world.url(WRITER), "HEAD:main")
    world.run_git("checkout", "-q", "main")
    number, _ = _open_pull(world)
    world.commit("app.py", "print('hello')\n")
    world.run_git("push", world.url(WRITER), "feature")
    world.api("POST", f"/issues/{number}/comments", USER, json={"body": "/fs-fix please"})
    world.api("POST", f"/pulls/{number}/reviews", READER, json={"body": "One.", "event": "REQUEST_CHANGES"})
    world.api("POST", "/issues", USER, json={"title": "Crash"})
    seen = {(r.event, r.payload["action"]): r.payload for r in world.emitter.runs}
    assert set(seen) == set(_HOOK_OF)
    for key, payload in seen.items():
        schema = {**WEBHOOKS["webhooks"][_HOOK_OF[key]], "$defs": WEBHOOKS["$defs"]}
        errors = sorted(Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(payload), key=str)
        assert not errors, (key, [f"{'/'.join(map(str, e.path))}: {e.message[:200]}" for e in errors[:8]])
