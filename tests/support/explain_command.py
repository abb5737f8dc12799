"""Helpers for ``fullsend explain`` tests: the command run as a subprocess the way a person runs
it, and lookups into its ``--json`` document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from fullsend.simulator.server import GitHubSimulator

READER_TOKEN = "gho_explain_reader_token"
READER_LOGIN = "octocat"
PR_URL = "https://github.com/org/repo/pull/7"
ITEM_CREATED_AT = "2026-09-03T09:00:00Z"  # before my run (FIX: 10:00:00Z), as on GitHub


def run_explain(
    sim: GitHubSimulator, *args: str, env: dict[str, str] | None = None, url: str = PR_URL
) -> subprocess.CompletedProcess[str]:
    """``python -m fullsend explain <url> *args`` with ``GH_TOKEN`` and ``GITHUB_API_URL`` set."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    full = {"GH_TOKEN": READER_TOKEN, "GITHUB_API_URL": sim.api_url, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "explain", url, *args],
        env={**base, **full},
        capture_output=True,
        text=True,
        timeout=60,
    )


def explain_json(sim: GitHubSimulator, *args: str, **kwargs: Any) -> dict[str, Any]:
    """The ``--json`` document; the command must exit 0."""
    proc = run_explain(sim, *args, "--json", **kwargs)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def run_of(doc: dict[str, Any], run_id: int) -> dict[str, Any]:
    """The follow-up (or item) run report for ``run_id``."""
    for run in doc["follow_ups"] + doc["item_runs"]:
        if run["run_id"] == run_id:
            return run
    raise AssertionError(f"run {run_id} is not in the report")


def comment_of(doc: dict[str, Any], comment_id: int) -> dict[str, Any]:
    """The comment report for ``comment_id``."""
    (found,) = [c for c in doc["comments"] if c["comment_id"] == comment_id]
    return found


def checks(run: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """check name → (outcome, rule id)."""
    return {c["check"]: (c["outcome"], c["rule_id"]) for c in run["checks"]}


def command(
    sim: GitHubSimulator, body: str, at: str, run_at: str, login: str = "reviewer", **run: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stage command by ``login`` created at ``at`` and the shim run it fired, created at
    ``run_at`` and titled ``org/repo#7 comment:<id>`` (the run-name contract); ``(comment, run)``."""
    from fullsend.simulator.fixtures import add_follow_up_run

    comment = sim.add_comment(7, body, login, created_at=at)
    return comment, add_follow_up_run(sim, comment_id=comment["id"], actor=login, created_at=run_at, **run)
