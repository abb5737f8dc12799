"""Pull requests follow their branches on the simulator's git server, as on GitHub: a push to a
pull request's head branch moves its head (``head.sha``, the commits and files ``compare``
answers) and emits ``pull_request`` ``synchronize`` with ``before`` and ``after``; the server keeps
``refs/pull/<n>/head`` at each pull request's head (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/reviewing-changes-in-pull-requests/checking-out-pull-requests-locally).

``follow_pulls(sim, git)`` wires it: the branch resolver of ``POST …/pulls`` reads the server's
branches, and the push listener moves heads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fullsend.simulator.git.server import ZERO_SHA, RefUpdate

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.git.server import GitServer
    from fullsend.simulator.server import GitHubSimulator

_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}


def follow_pulls(sim: GitHubSimulator, git: GitServer) -> None:
    """Make ``sim``'s pull requests follow ``git``'s branches of ``sim``'s repository (module docstring)."""
    owner, repo = sim.urls.owner, sim.urls.repo

    def resolve(branch: str) -> str | None:
        return git.refs(owner, repo).get(f"refs/heads/{branch}")

    def on_opened(event: str, data: dict[str, Any]) -> None:
        if event == "pull_request" and data.get("action") == "opened":
            _pull_refs(sim, git, int(data["number"]))

    def on_push(push_owner: str, push_repo: str, login: str, updates: list[RefUpdate]) -> None:
        if (push_owner.lower(), push_repo.lower()) != (owner.lower(), repo.lower()):
            return
        for update in updates:
            if update.ref.startswith("refs/heads/") and update.new != ZERO_SHA:
                _synchronize(sim, git, update.ref.removeprefix("refs/heads/"), update, login)

    sim.branch_resolver = resolve
    sim.listeners.insert(0, on_opened)
    git.on_push.append(on_push)


def _synchronize(sim: GitHubSimulator, git: GitServer, branch: str, update: RefUpdate, login: str) -> None:
    owner, repo = sim.urls.owner, sim.urls.repo
    for number in sim.open_pulls_from(branch):
        before = (sim.get_pull(number) or {})["head"]["sha"]
        if before == update.new:
            continue
        files = _files(git, owner, repo, before, update.new)
        ahead = int(git.git(owner, repo, "rev-list", "--count", f"{before}..{update.new}").strip() or 0)
        sim.move_head(number, update.new, files=files, ahead_by=ahead)
        _pull_refs(sim, git, number)
        sim.notify("pull_request", action="synchronize", number=number, login=login, before=before, after=update.new)


def _pull_refs(sim: GitHubSimulator, git: GitServer, number: int) -> None:
    """``refs/pull/<n>/head`` at the head, and ``refs/pull/<n>/merge`` at a commit merging it into
    the base branch's tip (none when they conflict: GitHub then marks the pull request unmergeable)."""
    owner, repo = sim.urls.owner, sim.urls.repo
    pull = sim.get_pull(number) or {}
    head, base_ref = pull["head"]["sha"], pull["base"]["ref"]
    git.update_ref(owner, repo, f"refs/pull/{number}/head", head)
    base = git.refs(owner, repo).get(f"refs/heads/{base_ref}", "")
    try:
        tree = git.git(owner, repo, "merge-tree", "--write-tree", base, head).split()[0]
    except RuntimeError:
        return
    env_identity = ["-c", "user.name=GitHub", "-c", "user.email=noreply@github.com"]
    merge = git.git(
        owner, repo, *env_identity, "commit-tree", tree, "-p", base, "-p", head, "-m", f"Merge {head} into {base}"
    )
    git.update_ref(owner, repo, f"refs/pull/{number}/merge", merge.strip())


def _files(git: GitServer, owner: str, repo: str, before: str, after: str) -> list[dict[str, Any]]:
    """The diff entries of ``before...after``: name, status, line counts and the patch."""
    out = []
    stats = git.git(owner, repo, "diff", "--numstat", f"{before}...{after}").splitlines()
    names = git.git(owner, repo, "diff", "--name-status", f"{before}...{after}").splitlines()
    for stat, name in zip(stats, names, strict=False):
        added, removed, filename = stat.split("\t", 2)
        status = _STATUS.get(name[:1], "modified")
        entry: dict[str, Any] = {"filename": filename.rsplit("\t", 1)[-1], "status": status}
        if added != "-":
            entry.update(additions=int(added), deletions=int(removed), changes=int(added) + int(removed))
            text = git.git(owner, repo, "diff", f"{before}...{after}", "--", entry["filename"])
            at = text.find("\n@@")
            entry["patch"] = text[at + 1 :].rstrip("\n") if at >= 0 else ""
        out.append(entry)
    return out
