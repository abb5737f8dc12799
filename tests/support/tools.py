"""The rule for tests that need a tool outside the Python locks (podman, act, zizmor, the agent CLIs).

On a developer's machine a missing tool SKIPS the test with one line naming the tool and the
command that installs it, so the README's test command passes on a fresh machine. Under
``CI=true`` (what ``.ci/run`` runs with) a missing tool FAILS the test: CI installs every tool
first, so a missing one there is a broken set-up, never a reason to pass.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """True when the environment says this is CI (``CI=true``, as GitHub Actions and .ci/run set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing_tool(what: str, install: str) -> NoReturn:
    """Skip (developer machine) or fail (CI) because ``what`` is not installed.

    ``what``: the tool(s), e.g. ``"podman"``; ``install``: the command that installs it.
    Raises pytest's skip or fail outcome; never returns.
    """
    message = f"needs {what}, which is not installed here; install it with: {install}"
    if in_ci():
        pytest.fail(f"{message} (CI=true: a missing tool fails instead of skipping)", pytrace=False)
    pytest.skip(message)
