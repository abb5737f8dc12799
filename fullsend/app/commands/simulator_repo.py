"""``fullsend simulator serve --repository DIR``: the scenario's repository served over git, and
the act flags that let the example workflows' checkouts reach it (README "Run it locally with
act").

The example workflows check out the base branch and the pull request's head with
``actions/checkout`` and a ``ref:``; act fetches such a checkout from GitHub, which a local run
cannot reach.  So the simulator serves ``DIR`` (a work directory of ``tools/act/workdir.sh``) as
``<owner>/<repo>`` on its git server, and the printed flags map each ``actions/<name>@<sha>`` the
work directory's workflows pin to the stand-in the checkout ships in ``tools/act/stand-ins``
(found from the directory the command runs in, the checkout's root as the README runs it), which
fetches from ``GITHUB_SERVER_URL`` as actions/checkout does from GitHub.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from fullsend.errors import ConfigError
from fullsend.simulator.git.publish import publish_folder, pull_request_refs
from fullsend.simulator.git.server import GitServer
from fullsend.simulator.server import GitHubSimulator

_PINNED = re.compile(r"uses:\s*actions/(?P<name>[\w.-]+)@(?P<sha>[0-9a-f]{40})\b")
STAND_INS = Path("tools") / "act" / "stand-ins"


def serve_folder(sim: GitHubSimulator, folder: Path, pulls: list[int]) -> Path:
    """Serve ``folder`` as ``sim``'s repository (module docstring): its default branch, and each
    pull request of ``pulls`` at its head branch and ``refs/pull/<n>/head``.  Returns the
    scratch folder holding the bare repository (remove it with ``shutil.rmtree`` at the stop).

    Raises ``ConfigError`` when ``folder`` is not a directory or git cannot commit it."""
    if not folder.is_dir():
        raise ConfigError(f"--repository {folder}: no such directory; give the work directory of tools/act/workdir.sh")
    scratch = Path(tempfile.mkdtemp(prefix="fullsend-sim-git-"))
    git = GitServer(sim, scratch)
    heads = [(n, str(pr["head"]["ref"]), str(pr["head"]["sha"])) for n in pulls if (pr := sim.get_pull(n)) is not None]
    try:
        publish_folder(git, sim.urls.owner, sim.urls.repo, folder, pull_request_refs(heads, "main"))
    except (RuntimeError, OSError) as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise ConfigError(f"--repository {folder}: cannot serve it over git ({exc})") from None
    sim.extensions.append(git)
    return scratch


def checkout_flags(folder: Path, web_url: str, stand_ins: Path) -> list[str]:
    """act flags for the checkouts of ``folder``'s workflows: ``GITHUB_SERVER_URL`` at the
    simulator and one ``--local-repository actions/<name>@<sha>=<stand-in>`` per pinned action
    with a stand-in under ``stand_ins`` (the checkout's ``tools/act/stand-ins``, outside the work
    directory, which the workflows' own checkouts rewrite); sorted, each once."""
    flags = [f"--env GITHUB_SERVER_URL={web_url}"]
    pins: set[tuple[str, str]] = set()
    for workflow in sorted((folder / ".github" / "workflows").glob("*.y*ml")):
        pins |= {(m["name"], m["sha"]) for m in _PINNED.finditer(workflow.read_text(encoding="utf-8"))}
    for name, sha in sorted(pins):
        stand_in = stand_ins / name
        if stand_in.is_dir():
            flags.append(f"--local-repository actions/{name}@{sha}={stand_in}")
    return flags
