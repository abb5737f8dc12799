"""GitHub's git over HTTPS, on the simulator's own port: ``<web>/<owner>/<repo>.git`` (also without
the ``.git``, as GitHub serves it).

Bare repositories under a root folder, served by ``git http-backend`` (``fullsend.simulator.git.cgi``)
with GitHub's credential rules for tokens
(https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation#about-authentication-as-a-github-app-installation:
an installation token is the password of ``x-access-token``; any user name is accepted):

- a private repository answers a request without credentials ``401`` with
  ``WWW-Authenticate: Basic realm="GitHub"`` (git then asks its credential helper), and an unknown
  token ``401`` too;
- a fetch needs a token the simulator knows (``contents`` read or write); a push needs
  ``contents: write`` (``GitHubSimulator.add_token(..., contents="write")``), else ``403``
  "Permission to <owner>/<repo>.git denied to <login>.";
- a public repository is read by anyone, pushed by nobody.

After a push, each ref it moved is reported to the ``on_push`` listeners (``RefUpdate``s, the
pusher's login) before git's answer leaves, so a ``git push`` that returned has been seen: the
simulator's world moves the pull request's head and emits ``synchronize``
(``fullsend.simulator.events``).  ``refs/pull/*`` cannot be pushed (``receive.hideRefs``), as on
GitHub; the server keeps them (:meth:`GitServer.update_ref`).
"""

from __future__ import annotations

import base64
import re
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING

from fullsend.simulator.git.cgi import BodyError, CgiAnswer, read_body, run_backend

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.server import GitHubSimulator

_PATH = re.compile(
    r"^/(?P<owner>[A-Za-z0-9][A-Za-z0-9._-]*)/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?(?P<rest>/info/refs|/git-upload-pack|/git-receive-pack)$"
)
_SERVICES = {"git-upload-pack": "read", "git-receive-pack": "write"}
ZERO_SHA = "0" * 40


@dataclass(frozen=True)
class RefUpdate:
    """One ref a push moved: ``old`` is ``ZERO_SHA`` for a new ref, ``new`` for a deleted one."""

    ref: str
    old: str
    new: str


PushListener = Callable[[str, str, str, list[RefUpdate]], None]
"""``listener(owner, repo, pusher_login, updates)``."""


class GitServer:
    """The simulator's git repositories and their smart-HTTP endpoint (module docstring)."""

    def __init__(self, sim: GitHubSimulator, root: Path) -> None:
        self.sim = sim
        self.root = root
        self.on_push: list[PushListener] = []
        self._public: set[tuple[str, str]] = set()
        self._push_lock = threading.Lock()

    # ----------------------------------------------------------------------------- repositories
    def create(self, owner: str, repo: str, *, public: bool = False, default_branch: str = "main") -> Path:
        """Make the bare repository ``<owner>/<repo>.git`` (empty, ``HEAD`` naming ``default_branch``);
        returns its folder.  A public one is readable without a token."""
        path = self.path(owner, repo)
        path.parent.mkdir(parents=True, exist_ok=True)
        _git(self.root, "init", "--quiet", "--bare", f"--initial-branch={default_branch}", str(path))
        for key, value in (
            ("uploadpack.allowReachableSHA1InWant", "true"),
            ("receive.hideRefs", "refs/pull"),
            ("http.receivepack", "true"),
        ):
            _git(path, "config", key, value)
        if public:
            self._public.add((owner.lower(), repo.lower()))
        return path

    def path(self, owner: str, repo: str) -> Path:
        """The bare repository's folder (it may not exist)."""
        return self.root / owner / f"{repo}.git"

    def url(self, owner: str, repo: str) -> str:
        """The clone URL, ``<web>/<owner>/<repo>.git`` (as ``https://github.com/<owner>/<repo>.git``)."""
        return f"{self.sim.urls.web}/{owner}/{repo}.git"

    def git(self, owner: str, repo: str, *args: str) -> str:
        """Run ``git <args>`` in the bare repository; its stdout.  Raises ``RuntimeError`` on failure."""
        return _git(self.path(owner, repo), *args)

    def refs(self, owner: str, repo: str) -> dict[str, str]:
        """Every ref of the repository and the object it names."""
        out = self.git(owner, repo, "for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def update_ref(self, owner: str, repo: str, ref: str, sha: str) -> None:
        """Point ``ref`` (e.g. ``refs/pull/7/head``) at ``sha``."""
        self.git(owner, repo, "update-ref", ref, sha)

    # ----------------------------------------------------------------------------- HTTP
    def serve(self, handler: BaseHTTPRequestHandler) -> bool:
        """Answer ``handler``'s request when its path is a repository's; False (nothing sent) otherwise."""
        raw_path, _, query = handler.path.partition("?")
        m = _PATH.match(raw_path)
        if m is None or not self.path(m["owner"], m["repo"]).is_dir():
            return False
        headers = {k.lower(): v for k, v in handler.headers.items()}
        service = _service(m["rest"], query)
        if service is None:
            _send(handler, CgiAnswer(404, [("Content-Type", "text/plain")], b"Not Found\n"))
            return True
        refused = self._refusal(m["owner"], m["repo"], headers.get("authorization", ""), service)
        if isinstance(refused, CgiAnswer):
            _send(handler, refused)
            return True
        try:
            body = read_body(handler.rfile, headers)  # type: ignore[arg-type]  # rfile is a binary stream
        except BodyError as exc:
            _send(handler, CgiAnswer(400, [("Content-Type", "text/plain")], f"{exc}\n".encode()))
            return True
        path_info = f"/{m['owner']}/{m['repo']}.git{m['rest']}"
        if service == "git-receive-pack" and handler.command == "POST":
            answer = self._push(m["owner"], m["repo"], refused, handler.command, path_info, query, body, headers)
        else:
            answer = run_backend(self.root, handler.command, path_info, query, body, headers, refused)
        _send(handler, answer)
        return True

    def _refusal(self, owner: str, repo: str, authorization: str, service: str) -> CgiAnswer | str:
        """The refusal for these credentials, or the login to serve them as ("" for anonymous reads)."""
        token = _basic_password(authorization)
        login = self.sim._identity(token)[0] if token else ""
        public = (owner.lower(), repo.lower()) in self._public
        if _SERVICES[service] == "read" and public:
            return login or "anonymous"
        if not login:
            return CgiAnswer(
                401,
                [("Content-Type", "text/plain"), ("WWW-Authenticate", 'Basic realm="GitHub"')],
                b"Invalid username or token. Password authentication is not supported for Git operations.\n",
            )
        if _SERVICES[service] == "write" and (public or self.sim.contents_permission(token) != "write"):
            message = f"Permission to {owner}/{repo}.git denied to {login}.\n"
            return CgiAnswer(403, [("Content-Type", "text/plain")], message.encode())
        return login

    def _push(
        self, owner: str, repo: str, login: str, method: str, path_info: str, query: str, body: bytes, headers: dict
    ) -> CgiAnswer:
        """Serve a receive-pack exchange and report the refs it moved to ``on_push`` before answering."""
        with self._push_lock:
            before = self.refs(owner, repo)
            answer = run_backend(self.root, method, path_info, query, body, headers, login)
            after = self.refs(owner, repo)
        updates = [
            RefUpdate(ref, before.get(ref, ZERO_SHA), after.get(ref, ZERO_SHA))
            for ref in sorted(set(before) | set(after))
            if before.get(ref) != after.get(ref)
        ]
        if updates:
            for listener in list(self.on_push):
                try:
                    listener(owner, repo, login, updates)
                except Exception as exc:  # a listener bug must not break git's answer; surface it
                    self.sim.errors.append(exc)
        return answer


def _service(rest: str, query: str) -> str | None:
    if rest == "/info/refs":
        name = dict(p.partition("=")[::2] for p in query.split("&")).get("service", "")
        return name if name in _SERVICES else None
    name = rest.removeprefix("/")
    return name if name in _SERVICES else None


def _basic_password(authorization: str) -> str:
    """The token of ``Basic base64(user:token)`` (the user name when the password is empty)."""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "basic":
        return ""
    try:
        user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return ""
    return password or user


def _send(handler: BaseHTTPRequestHandler, answer: CgiAnswer) -> None:
    handler.send_response(answer.status)
    for name, value in answer.headers:
        if name.lower() not in ("content-length", "transfer-encoding"):
            handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(answer.body)))
    handler.end_headers()
    handler.wfile.write(answer.body)


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[:500]}")
    return proc.stdout
