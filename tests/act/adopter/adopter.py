"""What an adopter does, in docs/adopting.md's order, for the adopter-path plays: a fresh
repository; ``fullsend init`` run in it (the release's own ``fullsend``: this machine's Python
with the release's tree first on ``PYTHONPATH``); ``fullsend lint``; the GitHub Apps, the
repository variables and the secrets; one commit of init's output, UNEDITED (``fullsend init
--upgrade`` must then say every file is what init writes), pushed to the world's ``main``.

Test-only settings go through what the workflows read, never through an edit: the scripted
agent's path is the repository variable ``FULLSEND_AGENT_CLI`` (an executable the play puts
inside the runner's workspace, ``.git/fullsend-scripted-agent``, outside every commit), the poll
interval the variable ``FULLSEND_POLL_INTERVAL_SECONDS``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.act.adopter.actions import AGENT_IN_WORKSPACE, Settings
from tests.act.adopter.world import MAINTAINER_TOKEN, World
from tests.support.release import Release

MODEL_KEY = "sk-ant-sim-model-key-0004"
POLL_INTERVAL_S = 2


#: Play (1)'s steps, in order: ``adopt`` does the first six, the play the rest; docs/adopting.md's
#: walk-through names the same steps in the same order.
WALKTHROUGH = (
    "install fullsend",
    "fullsend init",
    "fullsend lint",
    "create the GitHub Apps",
    "set the variables and secrets",
    "commit and push",
    "a pull request opens: Review",
    "changes requested: Fix",
    "a comment while Fix works: steered, receipt",
    "the comment's queued run skips",
)


@dataclass(frozen=True)
class Adopted:
    """An adopted repository: its local checkout, what init printed, the settings made on GitHub,
    and the ``WALKTHROUGH`` steps done so far (the play appends its own)."""

    checkout: Path
    init_output: str
    settings: Settings
    steps: list[str]


def fullsend(release_tree: Path, world: World, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The release's ``fullsend`` command, run in ``cwd`` against the world's GitHub: init checks
    ``--ref`` against the tags of ``$GITHUB_SERVER_URL/fullsend-ai/steer-action``."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))},
        "PYTHONPATH": str(release_tree),
        "GITHUB_SERVER_URL": world.web,
        "GITHUB_API_URL": world.sim.api_url,
    }
    return subprocess.run(
        [sys.executable, "-m", "fullsend", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=Maintainer", "-c", "user.email=maintainer@invalid"]
    proc = subprocess.run(["git", *identity, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def adopt(world: World, release: Release, folder: Path, workspace: Path, *init_args: str) -> Adopted:
    """Adopt steer-action into a fresh repository under ``folder`` and push it to the world (module
    docstring), in ``WALKTHROUGH``'s order (``Adopted.steps`` records them); ``workspace`` is where
    the plays' runner workspace will be (the agent's path)."""
    steps: list[str] = []
    checkout = folder / "repo"
    checkout.mkdir(parents=True)
    _git(checkout, "init", "--quiet", "--initial-branch=main")
    _git(checkout, "remote", "add", "origin", world.clone_url())  # as a clone from GitHub has it
    (checkout / "README.md").write_text("# repo\n")
    (checkout / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    _git(checkout, "add", "--all")
    _git(checkout, "commit", "--quiet", "-m", "The application")
    tree = release.tree(release.dispatch_commit)  # the release's own fullsend (PYTHONPATH)
    steps.append("install fullsend")
    made = fullsend(tree, world, "init", *init_args, "--ref", release.dispatch_commit, cwd=checkout)
    assert made.returncode == 0, f"fullsend init failed:\n{made.stderr}"
    steps.append("fullsend init")
    linted = fullsend(tree, world, "lint", cwd=checkout)
    assert linted.returncode == 0, f"fullsend lint on init's output:\n{linted.stdout}{linted.stderr}"
    steps.append("fullsend lint")
    settings = _settings(world, workspace)
    steps += ["create the GitHub Apps", "set the variables and secrets"]
    _git(checkout, "add", "--all")
    _git(checkout, "commit", "--quiet", "-m", "Adopt steer-action (fullsend init, unedited)")
    same = fullsend(tree, world, "init", "--upgrade", "--ref", release.dispatch_commit, cwd=checkout)
    assert same.returncode == 0 and "Up to date" in same.stdout, f"init's output was edited:\n{same.stdout}"
    _git(checkout, "push", "--quiet", world.clone_url(MAINTAINER_TOKEN), "main")
    steps.append("commit and push")
    return Adopted(checkout, made.stdout, settings, steps)


def _settings(world: World, workspace: Path) -> Settings:
    """The repository variables and secrets the adopter sets for the world's two Apps (installed
    from their own keys: ``world``), the model key and the test's agent and poll interval."""
    coder, review = world.apps["coder"], world.apps["review"]
    return Settings(
        variables={
            "FULLSEND_APP_CLIENT_ID": coder.client_id,
            "FULLSEND_REVIEW_APP_CLIENT_ID": review.client_id,
            "FULLSEND_AGENT_CLI": str(workspace / AGENT_IN_WORKSPACE),
            "FULLSEND_POLL_INTERVAL_SECONDS": str(POLL_INTERVAL_S),
        },
        secrets={
            "FULLSEND_APP_PRIVATE_KEY": coder.private_key,
            "FULLSEND_REVIEW_APP_PRIVATE_KEY": review.private_key,
            "ANTHROPIC_API_KEY": MODEL_KEY,
        },
    )
