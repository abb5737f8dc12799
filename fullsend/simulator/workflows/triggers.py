"""Which workflow files an event starts, and what GitHub writes on the run it creates.

- ``on:`` (https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows):
  a name, a list of names, or a mapping whose ``types:`` list the activity types; without
  ``types:`` every activity type starts the workflow, except ``pull_request`` and
  ``pull_request_target``, whose default is ``opened``, ``synchronize`` and ``reopened``.
- the run's ``display_title``: the workflow's ``run-name`` evaluated over the ``github`` context
  (``fullsend.simulator.workflows.expressions``); without one, the pull request's title for a
  pull request event, else the workflow's name.
- the run's ``referenced_workflows``: one ``{path, sha[, ref]}`` per job that calls a reusable
  workflow (https://docs.github.com/en/rest/actions/workflow-runs#get-a-workflow-run): a local
  one (``./.github/workflows/x.yml``) as ``<owner>/<repo>/.github/workflows/x.yml@<run ref>`` with
  the run's ref and sha; a remote one as written, with ``ref`` only when it names a ref, not a SHA.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from fullsend.simulator.workflows.expressions import interpolate

PULL_REQUEST_DEFAULT_TYPES = ("opened", "synchronize", "reopened")
_SHA = re.compile(r"[0-9a-f]{40}")


class WorkflowError(ValueError):
    """A workflow file that is not a YAML mapping."""


def load_workflow(text: str) -> dict[str, Any]:
    """The workflow as a mapping, with YAML 1.1's ``on`` → ``True`` key put back as ``"on"``.
    Raises ``WorkflowError``."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise WorkflowError(f"not YAML: {exc}") from None
    if not isinstance(data, dict):
        raise WorkflowError("not a mapping")
    if True in data and "on" not in data:
        data["on"] = data.pop(True)
    return data


def triggered(workflow: Mapping[str, Any], event: str, action: str) -> bool:
    """True when ``workflow``'s ``on:`` starts it for ``event`` with activity type ``action``."""
    on = workflow.get("on")
    if isinstance(on, str):
        on = {on: None}
    elif isinstance(on, list):
        on = {name: None for name in on if isinstance(name, str)}
    if not isinstance(on, dict) or event not in on:
        return False
    spec = on[event]
    types = spec.get("types") if isinstance(spec, dict) else None
    if types is None:
        return event not in ("pull_request", "pull_request_target") or action in PULL_REQUEST_DEFAULT_TYPES
    return action in (types if isinstance(types, list) else [types])


def display_title(workflow: Mapping[str, Any], github: Mapping[str, Any]) -> str:
    """The run's title (module docstring); ``github`` is the run's ``github`` context."""
    run_name = workflow.get("run-name")
    if isinstance(run_name, str):
        return interpolate(run_name, {"github": github})
    pull = (github.get("event") or {}).get("pull_request")
    if isinstance(pull, dict) and pull.get("title"):
        return str(pull["title"])
    return str(workflow.get("name") or "")


def referenced_workflows(workflow: Mapping[str, Any], repository: str, ref: str, sha: str) -> list[dict[str, str]]:
    """The run's ``referenced_workflows`` (module docstring); ``repository`` is ``owner/repo``."""
    out: list[dict[str, str]] = []
    jobs = workflow.get("jobs")
    for job in (jobs or {}).values() if isinstance(jobs, dict) else ():
        uses = job.get("uses") if isinstance(job, dict) else None
        if not isinstance(uses, str):
            continue
        uses = uses.strip()
        if uses.startswith("./"):
            out.append({"path": f"{repository}/{uses[2:]}@{ref}", "ref": ref, "sha": sha})
            continue
        pinned = uses.rpartition("@")[2]
        entry = {"path": uses, "sha": pinned if _SHA.fullmatch(pinned) else sha}
        if not _SHA.fullmatch(pinned):
            entry["ref"] = pinned if pinned.startswith("refs/") else f"refs/heads/{pinned}"
        out.append(entry)
    return out
