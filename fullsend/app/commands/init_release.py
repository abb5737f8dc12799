"""Whether ``fullsend init --ref`` names a steer-action release, and where steer-action is called
from (docs/adopting.md "Which commit init pins").

A release is a commit that a version tag ``vMAJOR.MINOR.PATCH`` of steer-action names (the commit
``tools/release/release.sh publish`` tags; an annotated tag counts by the commit it peels to).
The tags are read with ``git ls-remote --tags <server>/fullsend-ai/steer-action``, where the
server is ``GITHUB_SERVER_URL`` (default ``https://github.com``).  When they cannot be read (no
git, no network, a timeout), the check says so and init goes on with what it was told.

GitHub Enterprise Server is recognised by its REST API's path, ``/api/v3``: ``GITHUB_API_URL``,
else the API base of the server (``https://api.github.com`` for github.com, ``<server>/api/v3``
for any other host).  A GHES instance cannot call a reusable workflow hosted on github.com
(GitHub's "Reusing workflow configurations", Access to reusable workflows), so init writes the
self-contained dispatch there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from fullsend.adapters.proc import run_command
from fullsend.errors import SandboxError

DEFAULT_SERVER = "https://github.com"
ACTION_REPOSITORY = "fullsend-ai/steer-action"
RELEASE_TAG = re.compile(r"v\d+\.\d+\.\d+")
_LINE = re.compile(r"([0-9a-f]{40})\trefs/tags/([^\s^]+)(\^\{\})?")
LS_REMOTE_TIMEOUT_S = 20.0

#: ``(server URL) -> (ls-remote text, or None and why it failed)``: the one place init reaches out.
TagReader = Callable[[str], tuple[str | None, str]]


@dataclass(frozen=True)
class ReleaseCheck:
    """What init learned about ``--ref``: ``tag`` is the release tag that names it (``""``: none or
    not checked); ``checked`` is whether the tags could be read; ``where`` is the URL read;
    ``problem`` says why they could not be; ``tags`` maps each release tag read to its commit."""

    tag: str
    checked: bool
    where: str
    problem: str = ""
    tags: tuple[tuple[str, str], ...] = ()


def server_url(environ: Mapping[str, str]) -> str:
    """``GITHUB_SERVER_URL`` without a trailing ``/``, else ``https://github.com``."""
    return (environ.get("GITHUB_SERVER_URL", "").strip() or DEFAULT_SERVER).rstrip("/")


def is_ghes(environ: Mapping[str, str]) -> bool:
    """Whether the API is a GitHub Enterprise Server's: its path is ``/api/v3`` (module docstring)."""
    api = environ.get("GITHUB_API_URL", "").strip()
    if not api:
        server = urlsplit(server_url(environ))
        if server.scheme not in ("http", "https") or (server.hostname or "").lower() == "github.com":
            return False  # github.com, or a server on disk (file://), which no GHES is
        api = f"{server.scheme}://{server.netloc}/api/v3"
    return urlsplit(api).path.rstrip("/") == "/api/v3"


def release_tags(text: str) -> dict[str, str]:
    """``{tag: commit}`` of the release tags in ``git ls-remote --tags`` output; an annotated tag
    is taken at the commit of its ``^{}`` line.  Other tags (``v1``, ``latest``) are left out."""
    found: dict[str, str] = {}
    peeled: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.fullmatch(line.strip())
        if match and RELEASE_TAG.fullmatch(match.group(2)):
            (peeled if match.group(3) else found)[match.group(2)] = match.group(1)
    found.update(peeled)
    return found


def git_ls_remote(url: str) -> tuple[str | None, str]:
    """The tags of ``url`` (``git ls-remote --tags``, no prompt, ``LS_REMOTE_TIMEOUT_S``); on a
    failure ``(None, why)``.  Never raises."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "HTTPS_PROXY", "https_proxy")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="/bin/false", GCM_INTERACTIVE="never")
    try:
        result = run_command(["git", "ls-remote", "--tags", url], timeout_s=LS_REMOTE_TIMEOUT_S, env=env)
    except (SandboxError, OSError) as exc:
        return None, str(exc) or type(exc).__name__
    if result.exit_code != 0:
        last = [line for line in result.stderr.splitlines() if line.strip()]
        return None, (last[-1].strip() if last else f"git exit {result.exit_code}")[:200]
    return result.stdout, ""


def check_release(ref: str, environ: Mapping[str, str], read: TagReader = git_ls_remote) -> ReleaseCheck:
    """Which release tag of steer-action names ``ref`` (module docstring).  Never raises."""
    where = f"{server_url(environ)}/{ACTION_REPOSITORY}"
    text, problem = read(where)
    if text is None:
        return ReleaseCheck("", False, where, problem)
    tags = release_tags(text)
    named = sorted((t for t, sha in tags.items() if sha == ref), key=_version, reverse=True)
    ordered = tuple(sorted(tags.items(), key=lambda item: _version(item[0])))
    return ReleaseCheck(named[0] if named else "", True, where, "", ordered)


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag[1:].split("."))


def newest(check: ReleaseCheck) -> str:
    """``"v1.2.3 (abc…)"`` of the newest release tag read, or ``""`` when none was."""
    if not check.tags:
        return ""
    tag, sha = check.tags[-1]
    return f"{tag} ({sha})"


class DispatchRefused(Exception):
    """The dispatch asked for cannot work at this ref (exit 2); the message names the fix."""


@dataclass(frozen=True)
class DispatchChoice:
    """The dispatch init writes and the lines it prints about the choice (each ends in a newline)."""

    dispatch: str
    lines: tuple[str, ...]


def choose_dispatch(asked: str, queue: str, ref: str, check: ReleaseCheck, ghes: bool) -> DispatchChoice:
    """The dispatch for ``asked`` (``""``: init chooses; ``hosted``; ``self-contained``) at ``ref``:
    hosted only at a release commit, and not by default on GHES or with ``queue`` ``max``.
    Raises :class:`DispatchRefused` for ``hosted`` at a commit the tags show is no release."""
    said = [_about_ref(ref, check)]
    if asked == "hosted":
        if check.checked and not check.tag:
            raise DispatchRefused(
                f"--dispatch hosted needs a steer-action release commit, and {ref} is none: no vX.Y.Z tag of "
                f"{check.where} names it ({newest(check) or 'no release yet'}). At any other commit the hosted "
                "workflow's `uses: ./` lines would run your own repository. Pass a release's commit, or "
                "--dispatch self-contained, which works at any commit"
            )
        if ghes:
            said.append(GHES_HOSTED)
        return DispatchChoice("hosted", tuple(said))
    if asked == "self-contained":
        return DispatchChoice("self-contained", tuple(said))
    why = GHES_WHY if ghes else QUEUE_WHY if queue == "max" else "" if check.tag else UNRELEASED_WHY
    if why:
        return DispatchChoice("self-contained", (*said, why))
    return DispatchChoice("hosted", tuple(said))


def _about_ref(ref: str, check: ReleaseCheck) -> str:
    if not check.checked:
        return (
            f"Could not check whether {ref} is a steer-action release ({check.where}: {check.problem}); "
            "init takes it as no release.\n"
        )
    if check.tag:
        return f"Pinned steer-action {ref}: the release {check.tag} ({check.where} tags it).\n"
    return (
        f"{ref} is no steer-action release: no vX.Y.Z tag of {check.where} names it "
        f"({'newest release: ' + newest(check) if check.tags else 'no release yet'}).\n"
    )


UNRELEASED_WHY = (
    "Wrote the self-contained dispatch (.github/workflows/fullsend-dispatch.yml): the hosted dispatch\n"
    "runs only at a release commit (elsewhere its `uses: ./` lines would name your repository), while\n"
    "this one runs the action at the commit pinned (off a release, the runner builds its Dockerfile,\n"
    "about a minute a job). Once a release names a commit: fullsend init --upgrade --ref <it> --dispatch hosted.\n"
)
QUEUE_WHY = "Wrote the self-contained dispatch: --queue max needs it (the hosted one queues single).\n"
GHES_WHY = (
    "Wrote the self-contained dispatch: this is GitHub Enterprise Server (its API is /api/v3), which\n"
    "cannot call a reusable workflow hosted on github.com. The stage jobs pull the action's image\n"
    '(docs/adopting.md "GitHub Enterprise Server": GitHub Connect, or your own mirror).\n'
)
GHES_HOSTED = (
    "Note: this is GitHub Enterprise Server (its API is /api/v3): the hosted dispatch works only where your\n"
    "instance holds a copy of fullsend-ai/steer-action at that commit (actions-sync); else use\n"
    "--dispatch self-contained.\n"
)
