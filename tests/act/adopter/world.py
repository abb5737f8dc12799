"""The GitHub an adopter's repository lives on, for the adopter-path plays: one simulator serving
the REST API (with ``fullsend simulator serve``'s extras: collaborator roles, the OIDC token and
the mint), git (``fullsend/simulator/git``: ``org/repo``, private, and the released
``fullsend-ai/steer-action``, public, with its tags), the GitHub Apps' token endpoints, and the
runs each event starts (``fullsend/simulator/events``).  The scripted agent's log lines arrive at
``<web>/_fullsend/agent-log/<label>``.

Identities: the job token (``github-actions[bot]``, contents read, what act passes as
``GITHUB_TOKEN``); the maintainer, a person with admin rights and a token that may push (who
commits init's output); two Apps installed from their own keys: the one that authors and fixes
pull requests (``org-fullsend``: contents and pull requests write) and the review App
(``org-review``: contents read, pull requests write).
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from fullsend.app.commands.simulator import Extras, bind_serve_handler
from fullsend.simulator.apps import App, AppsServer
from fullsend.simulator.events.emitter import Emitter
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_TOKEN
from fullsend.simulator.git.pulls import follow_pulls
from fullsend.simulator.git.server import GitServer
from fullsend.simulator.server import GitHubSimulator

OWNER, REPO = "org", "repo"
MAINTAINER, MAINTAINER_TOKEN = "maintainer", "ghp_sim-maintainer-0003"
AGENT_LOG_PATH = "/_fullsend/agent-log/"
#: The Apps, by role: (slug, client ID, the installation's permissions).
APPS = {
    "coder": (
        "org-fullsend",
        "Iv1.simcoder0000001",
        {"contents": "write", "pull_requests": "write", "issues": "write"},
    ),
    "review": ("org-review", "Iv1.simreview000002", {"contents": "read", "pull_requests": "write", "issues": "write"}),
}


@dataclass(frozen=True)
class AppKey:
    """An App of the world and its private key (PEM), what the adopter stores as a secret."""

    slug: str
    client_id: str
    private_key: str

    @property
    def login(self) -> str:
        return f"{self.slug}[bot]"


class AgentLog:
    """``POST <web>/_fullsend/agent-log/<label>``: the scripted agent's log lines, kept per label."""

    def __init__(self) -> None:
        self.lines: dict[str, list[dict[str, Any]]] = {}
        #: ``listener(label, line)`` after each line is kept (the plays time events by the agent's work).
        self.on_line: list[Callable[[str, dict[str, Any]], None]] = []
        self._lock = threading.Lock()

    def serve(self, handler: BaseHTTPRequestHandler) -> bool:
        if handler.command != "POST" or not handler.path.startswith(AGENT_LOG_PATH):
            return False
        label = handler.path.removeprefix(AGENT_LOG_PATH)
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        line = json.loads(body)
        with self._lock:
            self.lines.setdefault(label, []).append(line)
        for listener in list(self.on_line):
            listener(label, line)
        handler.send_response(204)
        handler.end_headers()
        return True

    def of(self, label: str) -> list[dict[str, Any]]:
        """The lines logged under ``label``, in arrival order."""
        with self._lock:
            return list(self.lines.get(label, []))


@dataclass
class World:
    """A running world (module docstring)."""

    sim: GitHubSimulator
    git: GitServer
    apps: dict[str, AppKey]
    emitter: Emitter
    agent_log: AgentLog
    said: list[str] = field(default_factory=list)

    @property
    def web(self) -> str:
        return self.sim.urls.web

    def clone_url(self, token: str = "") -> str:
        """``org/repo``'s clone URL, with ``token`` as the password of ``x-access-token`` if given."""
        url = self.git.url(OWNER, REPO)
        return url.replace("http://", f"http://x-access-token:{token}@") if token else url

    def head(self, branch: str) -> str:
        """The commit ``branch`` of ``org/repo`` names on the server."""
        return self.git.refs(OWNER, REPO)[f"refs/heads/{branch}"]


def _key_pair(folder: Path, name: str) -> tuple[str, str]:
    private = folder / f"{name}.pem"
    subprocess.run(["openssl", "genrsa", "-out", str(private), "2048"], check=True, capture_output=True, timeout=60)
    public = subprocess.run(
        ["openssl", "rsa", "-in", str(private), "-pubout"], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return private.read_text(), public


def publish_release(git: GitServer, release_repo: Path, tags: list[str]) -> None:
    """Serve the release's repository as the public ``fullsend-ai/steer-action`` with ``tags``."""
    git.create("fullsend-ai", "steer-action", public=True)
    refspecs = [f"refs/tags/{t}:refs/tags/{t}" for t in tags]
    subprocess.run(
        ["git", "push", "--quiet", str(git.path("fullsend-ai", "steer-action")), *refspecs],
        cwd=release_repo,
        check=True,
        capture_output=True,
        timeout=120,
    )


@contextmanager
def world(folder: Path, collaborators: dict[str, str] | None = None) -> Iterator[World]:
    """A world under ``folder`` (its git repositories and keys), serving until the block ends."""
    said: list[str] = []
    sim = GitHubSimulator(OWNER, REPO)
    roles = {MAINTAINER: "admin", "author": "write", "reviewer": "write", **(collaborators or {})}
    bind_serve_handler(sim, 0, Extras(roles, ROLE_TOKEN, said.append))
    sim.add_token(JOB_TOKEN, JOB_LOGIN.removesuffix("[bot]"), "Bot")
    sim.add_token(MAINTAINER_TOKEN, MAINTAINER, "User", contents="write")
    git = GitServer(sim, folder / "git")
    apps_server, agent_log = AppsServer(sim), AgentLog()
    sim.extensions += [git, apps_server, agent_log]
    git.create(OWNER, REPO)
    follow_pulls(sim, git)
    keys = {}
    for role, (slug, client_id, permissions) in APPS.items():
        private, public = _key_pair(folder, slug)
        apps_server.add(App(slug, client_id, public, permissions))
        keys[role] = AppKey(slug, client_id, private)
    emitter = Emitter(sim, git)
    sim.start()
    try:
        yield World(sim, git, keys, emitter, agent_log, said)
    finally:
        sim.stop()


STAND_IN_TOKEN = (
    Path(__file__).resolve().parents[3] / "tools" / "act" / "stand-ins" / "create-github-app-token" / "main.py"
)


def app_token(world: World, role: str, permissions: str, folder: Path) -> str:
    """An installation token of the world's ``role`` App (``coder`` or ``review``) with
    ``permissions`` (``contents=write pull_requests=write``), taken the way a workflow takes one
    (the create-github-app-token stand-in, run here as a script)."""
    import os
    import sys

    app = world.apps[role]
    output = folder / f"token-{role}.out"
    output.unlink(missing_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "GITHUB_REPOSITORY": f"{OWNER}/{REPO}",
        "GITHUB_API_URL": world.sim.api_url,
        "GITHUB_OUTPUT": str(output),
        "STAND_IN_CLIENT_ID": app.client_id,
        "STAND_IN_PRIVATE_KEY": app.private_key,
        "STAND_IN_PERMISSIONS": permissions,
    }
    made = subprocess.run([sys.executable, str(STAND_IN_TOKEN)], env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    return dict(line.split("=", 1) for line in output.read_text().splitlines())["token"]
