"""The workflow runs GitHub creates for an event, from the workflow files of the simulator's git
repository (https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows).

``Emitter`` listens to the simulator's ``notify`` (REST writes, pushes).  For each event it reads
the workflow files where GitHub reads them — the default branch for ``issue_comment``, ``issues``
and ``pull_request_target``; the pull request's head for ``pull_request`` and
``pull_request_review`` (GitHub: its merge commit) — and creates one ``queued`` run per workflow
whose ``on:`` the event matches (``fullsend.simulator.workflows.triggers``), with the run-name,
``referenced_workflows``, head and pull requests GitHub writes.  A ``pull_request`` event is also
a ``pull_request_target`` event.  An event made with the job token (``github-actions[bot]``)
starts no run (https://docs.github.com/en/actions/concepts/security/github_token#when-github_token-triggers-workflow-runs).

Each run is appended to ``Emitter.runs`` as an ``EmittedRun`` (what a runner needs to play it:
the event name and payload) and handed to every ``on_run`` listener, in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fullsend.simulator.events.payloads import payload
from fullsend.simulator.workflows.triggers import (
    WorkflowError,
    display_title,
    load_workflow,
    referenced_workflows,
    triggered,
)

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.git.server import GitServer
    from fullsend.simulator.server import GitHubSimulator

JOB_TOKEN_LOGIN = "github-actions[bot]"
WORKFLOWS = ".github/workflows"
_HEAD_EVENTS = ("pull_request", "pull_request_review", "pull_request_review_comment")


@dataclass(frozen=True)
class EmittedRun:
    """One run an event created: the run's JSON as created, the event's name and payload, the
    workflow file, and the run's ``GITHUB_REF`` and ``GITHUB_SHA`` (the commit the workflow file
    was read at)."""

    run: dict[str, Any]
    event: str
    payload: dict[str, Any]
    workflow_path: str
    ref: str
    sha: str

    @property
    def id(self) -> int:
        return int(self.run["id"])


class Emitter:
    """Creates the runs of each event the simulator notifies (module docstring)."""

    def __init__(self, sim: GitHubSimulator, git: GitServer, default_branch: str = "main") -> None:
        self.sim, self.git, self.default_branch = sim, git, default_branch
        self.runs: list[EmittedRun] = []
        self.on_run: list[Callable[[EmittedRun], None]] = []
        self._lock = threading.Lock()
        sim.listeners.append(self.hear)

    def hear(self, event: str, data: dict[str, Any]) -> None:
        """``notify`` listener: create the runs of ``event`` (none for the job token's events)."""
        if str(data.get("login", "")).lower() == JOB_TOKEN_LOGIN:
            return
        names = [event, "pull_request_target"] if event == "pull_request" else [event]
        for name in names:
            self._start(name, data)

    def _start(self, event: str, data: dict[str, Any]) -> None:
        body = payload(self.sim, event, data)
        ref, sha = self._where(event, body)
        owner, repo = self.sim.urls.owner, self.sim.urls.repo
        for path, workflow in self._workflows(sha):
            if not triggered(workflow, event, str(data["action"])):
                continue
            github = {"repository": f"{owner}/{repo}", "event_name": event, "event": body, "ref": ref, "sha": sha}
            pulls = [int(data["number"])] if "pull_request" in body else []
            head_sha = str(body["pull_request"]["head"]["sha"]) if event in _HEAD_EVENTS else sha
            with self._lock:
                run = self.sim.add_workflow_run(
                    path=path,
                    name=str(workflow.get("name") or path.rsplit("/", 1)[-1]),
                    event=event,
                    status="queued",
                    display_title=display_title(workflow, github),
                    actor=str(data["login"]),
                    head_sha=head_sha,
                    head_branch=_branch(ref, body),
                    pull_requests=pulls,
                    referenced_workflows=referenced_workflows(workflow, f"{owner}/{repo}", ref, sha),
                )
                emitted = EmittedRun(run, event, body, path, ref, sha)
                self.runs.append(emitted)
            for listener in list(self.on_run):
                listener(emitted)

    def _where(self, event: str, body: dict[str, Any]) -> tuple[str, str]:
        """``GITHUB_REF`` and ``GITHUB_SHA`` of the event's runs: the pull request's merge ref for
        ``_HEAD_EVENTS`` (its head when the merge conflicts), else the default branch."""
        pull = body.get("pull_request")
        refs = self.git.refs(self.sim.urls.owner, self.sim.urls.repo)
        if event in _HEAD_EVENTS and isinstance(pull, dict):
            merge = f"refs/pull/{pull['number']}/merge"
            if merge in refs:
                return merge, refs[merge]
            return f"refs/pull/{pull['number']}/head", str(pull["head"]["sha"])
        ref = f"refs/heads/{self.default_branch}"
        return ref, refs.get(ref, "")

    def _workflows(self, sha: str) -> list[tuple[str, dict[str, Any]]]:
        """``(path, workflow)`` of each readable workflow file at ``sha`` (none when it is unknown)."""
        if not sha:
            return []
        owner, repo = self.sim.urls.owner, self.sim.urls.repo
        listed = self.git.git(owner, repo, "ls-tree", "--name-only", f"{sha}:{WORKFLOWS}").split()
        out = []
        for name in sorted(n for n in listed if n.endswith((".yml", ".yaml"))):
            try:
                out.append(
                    (
                        f"{WORKFLOWS}/{name}",
                        load_workflow(self.git.git(owner, repo, "show", f"{sha}:{WORKFLOWS}/{name}")),
                    )
                )
            except WorkflowError:
                continue  # GitHub shows a broken workflow file as a failed run; the plays write none
        return out


def _branch(ref: str, body: dict[str, Any]) -> str:
    """The run's ``head_branch``: the pull request's head branch for a merge ref, else the branch."""
    pull = body.get("pull_request")
    if ref.startswith("refs/pull/") and isinstance(pull, dict):
        return str(pull["head"]["ref"])
    return ref.removeprefix("refs/heads/")
