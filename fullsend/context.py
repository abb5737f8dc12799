"""The GitHub context: ``GITHUB_*`` / ``ACTIONS_*`` variables and the event payload.

docs/architecture.md "Inputs and settings".  Standard library only, so the queued run's skip
reads the context without the inputs' validation library (docs/architecture.md "Fast skip").
Nothing here makes an API call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fullsend.core.scalars import parse_run_id

_VALUE_SHOWN_MAX = 40


@dataclass(frozen=True)
class GitHubContext:
    """The ``GITHUB_*`` / ``ACTIONS_*`` environment and the event payload.

    ``graphql_url`` is ``GITHUB_GRAPHQL_URL`` when set, else derived from ``api_url``
    (``…/api/v3`` → ``…/api/graphql``, otherwise ``<api_url>/graphql``).
    """

    api_url: str = "https://api.github.com"
    graphql_url: str = "https://api.github.com/graphql"
    server_url: str = "https://github.com"
    repository: str = ""
    run_id_raw: str = ""
    run_attempt_raw: str = ""
    job: str = ""
    event_name: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    event_readable: bool = True
    workspace: Path = Path(".")
    output_path: str = ""
    summary_path: str = ""
    actions: bool = False
    id_token_request_url: str = ""
    id_token_request_token: str = ""
    #: ``GITHUB_WORKFLOW_REF``: ``owner/repo/path@ref`` of the run's (top-level) workflow.
    workflow_ref: str = ""

    @property
    def default_branch(self) -> str:
        """The repository's default branch as the event payload names it (``""`` when it does not)."""
        repository = self.event.get("repository")
        branch = repository.get("default_branch") if isinstance(repository, Mapping) else None
        return branch if isinstance(branch, str) else ""

    @property
    def run_id(self) -> int:
        """``GITHUB_RUN_ID`` as a positive int64, else 0 (``parse_run_id``, the one reader of it)."""
        return parse_run_id(self.run_id_raw)

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id_raw}" if self.run_id_raw else ""


def load_context(environ: Mapping[str, str] | None = None) -> GitHubContext:
    """Read the GitHub context from the environment; never raises (unreadable event → empty)."""
    env = os.environ if environ is None else environ
    api = (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    graphql = (env.get("GITHUB_GRAPHQL_URL") or "").rstrip("/")
    if not graphql:
        graphql = api[: -len("/v3")] + "/graphql" if api.endswith("/api/v3") else api + "/graphql"
    event, readable = _read_event(env.get("GITHUB_EVENT_PATH", ""))
    return GitHubContext(
        api_url=api,
        graphql_url=graphql,
        server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        repository=env.get("GITHUB_REPOSITORY", ""),
        run_id_raw=env.get("GITHUB_RUN_ID", ""),
        run_attempt_raw=env.get("GITHUB_RUN_ATTEMPT", ""),
        job=env.get("GITHUB_JOB", ""),
        event_name=env.get("GITHUB_EVENT_NAME", ""),
        event=event,
        event_readable=readable,
        workspace=Path(env.get("GITHUB_WORKSPACE") or os.getcwd()),
        output_path=env.get("GITHUB_OUTPUT", ""),
        summary_path=env.get("GITHUB_STEP_SUMMARY", ""),
        actions=env.get("GITHUB_ACTIONS", "") == "true",
        id_token_request_url=env.get("ACTIONS_ID_TOKEN_REQUEST_URL", ""),
        id_token_request_token=env.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN", ""),
        workflow_ref=env.get("GITHUB_WORKFLOW_REF", ""),
    )


def api_url_problem(url: str, name: str = "GITHUB_API_URL") -> str | None:
    """Why ``url`` cannot be an API base (not ``http(s)://host[...]``), or ``None`` when it can."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = repr(url if len(url) <= _VALUE_SHOWN_MAX else url[:_VALUE_SHOWN_MAX] + "…")
        return (
            f"{name} {shown} is not an http(s) URL with a host; unset it for github.com or give the API base, "
            "e.g. https://HOST/api/v3"
        )
    return None


def _read_event(path: str) -> tuple[Mapping[str, Any], bool]:
    if not path:
        return {}, False
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, False
    return (data, True) if isinstance(data, dict) else ({}, False)


def dispatch_payload(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """The normalized event of a reusable dispatch (``inputs.event_payload``, a JSON string), or {}."""
    inputs = event.get("inputs") if isinstance(event, Mapping) else None
    raw = inputs.get("event_payload") if isinstance(inputs, Mapping) else None
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return raw if isinstance(raw, dict) else {}


def item_from_event(event: Mapping[str, Any]) -> int:
    """The issue or PR number the event is about (event payload, then the dispatch payload), else 0."""
    for source in (event, dispatch_payload(event)):
        for key in ("issue", "pull_request"):
            obj = source.get(key) if isinstance(source, Mapping) else None
            num = obj.get("number") if isinstance(obj, Mapping) else None
            if isinstance(num, int) and not isinstance(num, bool) and num > 0:
                return num
        num = source.get("number") if isinstance(source, Mapping) else None
        if isinstance(num, int) and not isinstance(num, bool) and num > 0:
            return num
    return 0


def head_sha_from_event(event: Mapping[str, Any]) -> str:
    """Run head: the event's ``pull_request.head.sha``, else the dispatch payload's; never GITHUB_SHA."""
    for source in (event, dispatch_payload(event)):
        pr = source.get("pull_request") if isinstance(source, Mapping) else None
        head = pr.get("head") if isinstance(pr, Mapping) else None
        sha = head.get("sha") if isinstance(head, Mapping) else None
        if isinstance(sha, str) and sha:
            return sha
    return ""
