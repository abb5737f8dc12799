"""What ``fullsend init`` prints after writing: the next steps per role-token mode (the two
GitHub Apps and their names, derived from the owner: ``fullsend.core.app_names``) and the
conditions on which Route starts Fix (docs/adopting.md "Start with fullsend init")."""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from fullsend.adapters.proc import run_command
from fullsend.core.app_names import author_app_name, review_app_name
from fullsend.errors import SandboxError

#: Where to create the GitHub Apps from (docs/adopting.md "Create the GitHub Apps from the manifests").
APP_MANIFEST_URL = "https://github.com/fullsend-ai/steer-action/blob/main/app-manifest.json"
CREATE_APP_PAGE = "docs/create-app.html"
GIT_TIMEOUT_S = 10
WIDTH = 100
#: The owner in ``https://host[/prefix]/OWNER/REPO(.git)``, ``ssh://git@host/OWNER/REPO``,
#: ``git@host:OWNER/REPO``: the second-last segment of the path.
_REMOTE_OWNER = re.compile(r"[/:]([A-Za-z0-9][A-Za-z0-9-]{0,38})/[^/:]+/?$")


def origin_owner(root: Path) -> str:
    """The owner named by ``root``'s git remote ``origin`` (``""`` when there is none, it names no
    owner, or git fails).  Never raises."""
    try:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
        argv = ["git", "-C", str(root), "remote", "get-url", "origin"]
        result = run_command(argv, timeout_s=GIT_TIMEOUT_S, env=env)
    except (SandboxError, OSError):
        return ""
    found = _REMOTE_OWNER.search(result.stdout.strip()) if result.exit_code == 0 else None
    return found.group(1) if found else ""


def _names(owner: str) -> tuple[str, str]:
    """(authoring App, review App) names for ``owner``, or the rule when it is unknown."""
    if not owner:
        return "<owner>-fullsend", "<owner>-review"
    return author_app_name(owner), review_app_name(owner)


def _wrapped(*paragraphs: str) -> str:
    """Each paragraph filled to ``WIDTH`` columns (a ``- `` item's lines indented under its text)."""
    return "".join(
        textwrap.fill(
            p,
            WIDTH,
            subsequent_indent="  " if p.startswith("- ") else "",
            break_long_words=False,
            break_on_hyphens=False,
        )
        + "\n"
        for p in paragraphs
    )


def next_steps(role_token: str, stages: Sequence[str], secrets: str, owner: str) -> str:
    """The lines after the list of files: what to create and set before the first run."""
    if role_token == "mint":
        return _wrapped(
            "Next: set the repository variable FULLSEND_MINT_URL to your mint service (docs/adopting.md "
            f'"The mint protocol") and the secret {secrets}; then run `fullsend lint` and commit.'
        )
    author, review = _names(owner)
    two = "review" in stages
    named = f"owner {owner}, from the origin remote" if owner else "<owner>: the repository's owner"
    paragraphs = [
        f"Next: create the GitHub App{'s' if two else ''}, each in one form of {CREATE_APP_PAGE} "
        f'(docs/adopting.md "Create the GitHub Apps from the manifests"; {APP_MANIFEST_URL}), '
        f"named from the owner so that no other adopter has the name ({named}):",
        f"- {author}, which authors pull requests and pushes: the repository variable "
        "FULLSEND_APP_CLIENT_ID and the secret FULLSEND_APP_PRIVATE_KEY;",
    ]
    if two:
        paragraphs.append(
            f"- {review}, which posts the reviews"
            + (f" (its login {review}[bot] is Route's default review_app)" if "fix" in stages else "")
            + ": "
            "the variable FULLSEND_REVIEW_APP_CLIENT_ID and the secret FULLSEND_REVIEW_APP_PRIVATE_KEY "
            "(unset: the App above reviews, and GitHub refuses its changes-requested review on a pull "
            "request it authored);"
        )
    paragraphs.append(
        f"install {'both' if two else 'it'} on the repository; set the secret {secrets}; then run "
        "`fullsend lint` and commit."
    )
    return _wrapped(*paragraphs)


def fix_hint(hosted: bool, owner: str) -> str:
    """Every condition Route checks before it starts Fix (docs/rules.md#route-review-fix), and where
    ``review_app`` is set."""
    where = "review_app in fullsend.yml" if hosted else "review_app: on the Route step in fullsend-dispatch.yml"
    return _wrapped(
        "Fix starts (docs/rules.md, route-review-fix) on a changes_requested review by the review App "
        f"({where}; empty: {_names(owner)[1]}[bot]) on a pull request of this repository (not a fork's) "
        "that is not labelled fullsend-no-fix, whose author is an App or that is labelled fullsend-fix "
        "(then the author needs write), at most max_fix_rounds (3) times per pull request; or on /fs-fix "
        "from someone with write. The review job uses FULLSEND_REVIEW_APP_CLIENT_ID and "
        "FULLSEND_REVIEW_APP_PRIVATE_KEY when set: use the review App there if an App authors the pull "
        "requests (GitHub refuses a changes-requested review by the pull request's author)."
    )
